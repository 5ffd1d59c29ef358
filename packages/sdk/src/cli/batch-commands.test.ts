import { describe, expect, it } from 'vitest';
import type { BulkBatch } from '@inferq/contracts';
import { batchProgress } from '../batches.ts';
import { formatEta, metadataOption } from './batch-commands.ts';
import { UsageError } from './config.ts';

const running = (completed: number, failed: number, total = 1000) => ({ request_counts: { total, completed, failed } }) as BulkBatch;

describe('batch submit options', () => {
  it('--metadata takes KEY=VALUE pairs, the value may hold =', () => {
    expect(metadataOption({})).toBeUndefined();
    expect(metadataOption({ metadata: ['run=nightly', 'q=a=b', 'empty='] as unknown as string })).toEqual({ run: 'nightly', q: 'a=b', empty: '' });
    expect(() => metadataOption({ metadata: ['nightly'] as unknown as string })).toThrow(UsageError);
    expect(() => metadataOption({ metadata: ['=x'] as unknown as string })).toThrow(UsageError);
  });
});

describe('batch progress', () => {
  it('counts completed and failed as done, the rate since the mark, and the time left at it', () => {
    const p = batchProgress(running(250, 50), { at: 0, done: 100 }, 10_000);
    expect(p).toEqual({ done: 300, total: 1000, perS: 20, etaS: 35 });
  });

  it('has no rate before time passes and no ETA before anything is done', () => {
    expect(batchProgress(running(0, 0), { at: 5, done: 0 }, 5)).toMatchObject({ perS: undefined, etaS: undefined });
    expect(batchProgress(running(0, 0), { at: 0, done: 0 }, 1000)).toMatchObject({ perS: 0, etaS: undefined });
  });

  it('counts from when the batch began running without a mark, and has no rate before it did', () => {
    const startedAt = 1_000;
    expect(batchProgress({ ...running(400, 0), in_progress_at: startedAt }, undefined, (startedAt + 20) * 1000)).toEqual({
      done: 400,
      total: 1000,
      perS: 20,
      etaS: 30,
    });
    expect(batchProgress({ ...running(0, 0), in_progress_at: null }, undefined, 5_000)).toEqual({ done: 0, total: 1000, perS: undefined, etaS: undefined });
  });

  it('formats the ETA in seconds, minutes or hours', () => {
    expect([formatEta(undefined), formatEta(Infinity), formatEta(44.6), formatEta(200), formatEta(7500)]).toEqual(['–', '–', '45s', '3m 20s', '2h 05m']);
  });
});
