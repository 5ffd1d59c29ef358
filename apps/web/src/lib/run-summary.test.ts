import { describe, expect, it } from 'vitest';
import { summarizeRun } from './run-summary.ts';

describe('summarizeRun', () => {
  it('counts statuses and groups the batch sizes jobs ran in', () => {
    const summary = summarizeRun([
      { status: 'succeeded', batchSize: 8 },
      { status: 'succeeded', batchSize: 8 },
      { status: 'failed', batchSize: 2 },
      { status: 'running', batchSize: null },
      { status: 'queued', batchSize: null },
    ]);
    expect(summary.finished).toBe(3);
    expect(summary.byStatus).toMatchObject({ succeeded: 2, failed: 1, running: 1, queued: 1, canceled: 0 });
    expect(summary.batchSizes).toEqual([
      [2, 1],
      [8, 2],
    ]);
  });
});
