import { describe, expect, it } from 'vitest';
import { toFloat16Bits } from '@inferq/contracts';
import { floatValues, poolEmbedding } from './pooling.ts';

// Output of one text, [1, 3 positions, 2 dims]: two real tokens, one padding.
const hidden = Float64Array.from([1, 2, 3, 4, 100, 100]);
const shape = [1, 3, 2];

describe('poolEmbedding', () => {
  it('averages the real tokens only (mean), or takes the first (cls)', () => {
    expect([...poolEmbedding(hidden, shape, 2, { pooling: 'mean', normalize: false })]).toEqual([2, 3]);
    expect([...poolEmbedding(hidden, shape, 2, { pooling: 'cls', normalize: false })]).toEqual([1, 2]);
  });

  it('takes a pooled [1, dim] output as it is', () => {
    expect([...poolEmbedding(Float64Array.from([3, 4]), [1, 2], 7, { pooling: 'none', normalize: false })]).toEqual([3, 4]);
  });

  it('keeps the first `dimensions` values, then normalises what is kept', () => {
    expect([...poolEmbedding(Float64Array.from([3, 4, 12]), [1, 3], 1, { pooling: 'none', normalize: true })]).toEqual([3 / 13, 4 / 13, 12 / 13]);
    expect([...poolEmbedding(Float64Array.from([3, 4, 12]), [1, 3], 1, { pooling: 'none', normalize: true }, 2)]).toEqual([0.6, 0.8]);
    // An all-zero vector stays zero rather than becoming NaN.
    expect([...poolEmbedding(Float64Array.from([0, 0]), [1, 2], 1, { pooling: 'none', normalize: true })]).toEqual([0, 0]);
  });
});

describe('floatValues', () => {
  it('reads FP32, FP16 and FP64 little-endian bytes, and refuses other datatypes', () => {
    expect([...floatValues('FP32', new Uint8Array(Float32Array.from([0.5, -2]).buffer))]).toEqual([0.5, -2]);
    expect([...floatValues('FP64', new Uint8Array(Float64Array.from([0.1]).buffer))]).toEqual([0.1]);
    expect([...floatValues('FP16', new Uint8Array(Uint16Array.from([toFloat16Bits(1.5)]).buffer))]).toEqual([1.5]);
    expect(() => floatValues('INT64', new Uint8Array(8))).toThrow(/float outputs/);
  });
});
