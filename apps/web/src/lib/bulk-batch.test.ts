import { describe, expect, it } from 'vitest';
import { exampleBulkBatch } from '@inferq/contracts';
import type { BulkBatch } from '@inferq/sdk';
import { batchEndedAt, batchFileName, batchTimeline, metadataSummary, unixToIso } from './bulk-batch.ts';

const T = 1_748_856_600; // 2025-06-02T09:30:00Z
const running: BulkBatch = {
  ...exampleBulkBatch,
  created_at: T,
  in_progress_at: T + 4,
  expires_at: T + 86_400,
  request_counts: { total: 10, completed: 4, failed: 1 },
  metadata: { team: 'search', run: 'nightly' },
};

describe('Batch API batch helpers', () => {
  it('turns Unix seconds into ISO times', () => {
    expect(unixToIso(T)).toBe('2025-06-02T09:30:00.000Z');
  });

  it('lists the moments that happened, with the deadline only while the batch runs', () => {
    expect(batchEndedAt(running)).toBeNull();
    expect(batchTimeline(running)).toEqual([
      ['Created', T],
      ['In progress', T + 4],
      ['Expires', T + 86_400],
    ]);
    const cancelled: BulkBatch = { ...running, status: 'cancelled', cancelling_at: T + 10, cancelled_at: T + 12 };
    expect(batchEndedAt(cancelled)).toBe(T + 12);
    expect(batchTimeline(cancelled)).toEqual([
      ['Created', T],
      ['In progress', T + 4],
      ['Cancelling', T + 10],
      ['Ended (cancelled)', T + 12],
    ]);
    const failed: BulkBatch = { ...running, status: 'failed', in_progress_at: null, failed_at: T + 1 };
    expect(batchTimeline(failed).map(([label]) => label)).toEqual(['Created', 'Ended (failed)']);
  });

  it('summarises metadata in key order, and names the saved files after the batch', () => {
    expect(metadataSummary(running.metadata)).toBe('run=nightly, team=search');
    expect(metadataSummary(null)).toBe('');
    expect(batchFileName(running.id, 'output')).toBe(`${running.id}-output.jsonl`);
    expect(batchFileName(running.id, 'errors')).toBe(`${running.id}-errors.jsonl`);
  });
});
