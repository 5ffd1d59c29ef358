import { describe, expect, it } from 'vitest';
import { webhookRetryDelayMs } from './backoff.ts';

describe('webhookRetryDelayMs', () => {
  it('grows 4x per attempt within ±20 % jitter, capped at 6 h', () => {
    expect([1, 2, 3, 4].map((n) => webhookRetryDelayMs(n, 5_000, () => 0.5))).toEqual([5_000, 20_000, 80_000, 320_000]);
    expect(webhookRetryDelayMs(1, 5_000, () => 0)).toBe(4_000);
    expect(webhookRetryDelayMs(1, 5_000, () => 1)).toBe(6_000);
    expect(webhookRetryDelayMs(20, 5_000, () => 0.5)).toBe(6 * 60 * 60 * 1000);
  });
});
