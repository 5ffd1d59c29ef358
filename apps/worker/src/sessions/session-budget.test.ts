import { describe, expect, it } from 'vitest';
import { estimateSessionBytes, pickEvictions } from './session-budget.ts';

const s = (key: string, estimatedBytes: number, lastUsedMs: number, evictable = true) => ({ key, estimatedBytes, lastUsedMs, evictable });

describe('session memory budget', () => {
  it('reckons a session at twice its artifact', () => {
    expect(estimateSessionBytes(100)).toBe(200);
  });

  it('picks the least recently used evictable sessions until the newcomer fits', () => {
    const loaded = [s('new', 10, 3), s('old', 10, 1), s('mid', 10, 2), s('busy', 10, 0, false)];
    expect(pickEvictions(loaded, 10, 50)).toEqual({ keys: [], fits: true });
    expect(pickEvictions(loaded, 10, 40)).toEqual({ keys: ['old'], fits: true });
    expect(pickEvictions(loaded, 15, 40)).toEqual({ keys: ['old', 'mid'], fits: true });
  });

  it('says when even unloading every evictable session is not enough', () => {
    expect(pickEvictions([s('a', 10, 1), s('busy', 30, 0, false)], 20, 40)).toEqual({ keys: ['a'], fits: false });
    expect(pickEvictions([], 100, 40)).toEqual({ keys: [], fits: false });
  });

  it('has no limit at 0', () => {
    expect(pickEvictions([s('a', 10 ** 12, 1)], 10 ** 12, 0)).toEqual({ keys: [], fits: true });
  });
});
