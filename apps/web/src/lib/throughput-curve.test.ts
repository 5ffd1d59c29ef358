import { describe, expect, it } from 'vitest';
import { batchSizeTicks, log2Position, toThroughputCurve } from './throughput-curve.ts';

describe('toThroughputCurve', () => {
  it('turns inference time per size into items per second, smallest size first', () => {
    const curve = [
      { items: 16, inferMs: 8, deviationMs: 1, samples: 5 },
      { items: 1, inferMs: 2, deviationMs: 0.1, samples: 9 },
      { items: 4, inferMs: 0, deviationMs: 0, samples: 1 },
    ];
    expect(toThroughputCurve(curve)).toEqual([
      { items: 1, itemsPerS: 500 },
      { items: 16, itemsPerS: 2000 },
    ]);
  });
});

describe('log2Position', () => {
  it('places sizes on a log2 scale between the smallest and largest, clamped', () => {
    expect(log2Position(1, 1, 64)).toBe(0);
    expect(log2Position(8, 1, 64)).toBe(0.5);
    expect(log2Position(64, 1, 64)).toBe(1);
    expect(log2Position(128, 1, 64)).toBe(1);
    expect(log2Position(16, 16, 16)).toBe(0.5);
  });
});

describe('batchSizeTicks', () => {
  it('labels the ends and the powers of two between them that do not crowd a label', () => {
    expect(batchSizeTicks(1, 64, 0.1)).toEqual([1, 2, 4, 8, 16, 32, 64]);
    expect(batchSizeTicks(3, 50, 0.2)).toEqual([3, 8, 16, 50]);
    expect(batchSizeTicks(1, 4096, 0.15)).toEqual([1, 4, 16, 64, 256, 1024, 4096]);
    expect(batchSizeTicks(8, 8, 0.1)).toEqual([8]);
  });
});
