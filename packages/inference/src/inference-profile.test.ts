import { describe, expect, it } from 'vitest';
import { InferenceProfile } from './inference-profile.ts';

describe('InferenceProfile', () => {
  it('knows nothing before the first run', () => {
    expect(new InferenceProfile().expectedMs(4)).toBeUndefined();
  });

  it('fits fixed cost plus cost per item through every size, until a size has runs of its own', () => {
    const p = new InferenceProfile();
    // 2 ms fixed + 0.5 ms per item.
    for (const items of [1, 2, 4, 8]) p.record(items, 2 + 0.5 * items);
    expect(p.expectedMs(16)).toBeCloseTo(10, 6);
    expect(p.expectedMs(3)).toBeCloseTo(3.5, 6);
    for (let i = 0; i < 3; i++) p.record(16, 20);
    expect(p.expectedMs(16)).toBeCloseTo(20, 0);
  });

  it('grows in proportion to items while only one size was seen', () => {
    const p = new InferenceProfile();
    p.record(4, 8);
    expect(p.expectedMs(8)).toBeCloseTo(16, 6);
  });

  it('adds deviations for a pessimistic estimate, and lists the curve by size', () => {
    const p = new InferenceProfile();
    for (const ms of [10, 14, 10, 14, 10, 14]) p.record(4, ms);
    const point = p.curve()[0]!;
    expect(point).toMatchObject({ items: 4, samples: 6 });
    expect(point.deviationMs).toBeGreaterThan(1);
    expect(p.expectedMs(4, 2)!).toBeCloseTo(point.inferMs + 2 * point.deviationMs, 6);
    p.record(1, 3);
    expect(p.curve().map((c) => c.items)).toEqual([1, 4]);
  });

  it('ignores nonsense', () => {
    const p = new InferenceProfile();
    p.record(0, 5);
    p.record(2, Number.NaN);
    p.record(2, -1);
    expect(p.curve()).toEqual([]);
  });
});
