import { describe, expect, it } from 'vitest';
import { missesWindow } from './api-metrics.ts';

const HOUR = 3_600_000;
const t0 = Date.parse('2026-11-28T00:00:00Z');
const batch = (ranMs: number, done: number, windowMs = 24 * HOUR) => ({
  status: 'in_progress' as const,
  inProgressAt: new Date(t0),
  expiresAt: new Date(t0 + windowMs),
  total: 1_000_000,
  completed: done,
  failed: 0,
  now: t0 + ranMs,
});

describe('missesWindow', () => {
  it('projects the rate so far to the end: a batch a quarter done in a quarter of its window makes it, one a tenth done does not', () => {
    const onPace = batch(6 * HOUR, 260_000);
    const behind = batch(6 * HOUR, 100_000);
    expect(missesWindow(onPace, onPace.now)).toBe(false);
    expect(missesWindow(behind, behind.now)).toBe(true);
  });

  it('says nothing in the first minute, and counts a batch with nothing done after it as missing', () => {
    expect(missesWindow(batch(30_000, 0), t0 + 30_000)).toBe(false);
    expect(missesWindow(batch(120_000, 0), t0 + 120_000)).toBe(true);
    expect(missesWindow({ ...batch(6 * HOUR, 0), status: 'finalizing' }, t0 + 6 * HOUR)).toBe(false);
  });
});
