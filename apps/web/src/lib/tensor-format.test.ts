import { describe, expect, it } from 'vitest';
import { encodeBase64 } from '@inferq/contracts';
import { SUMMARY_THRESHOLD, formatScalar, formatTensor, isSummarised, tensorValues } from './tensor-format.ts';

describe('formatScalar', () => {
  it('keeps integers and booleans as they are', () => {
    expect(formatScalar(42)).toBe('42');
    expect(formatScalar(true)).toBe('true');
    expect(formatScalar('9007199254740993')).toBe('9007199254740993');
  });

  it('rounds floats to 5 significant digits and uses exponents at the extremes', () => {
    expect(formatScalar(0.123456789)).toBe('0.12346');
    expect(formatScalar(-12.3456789)).toBe('-12.346');
    expect(formatScalar(0.0000123)).toBe('1.230e-5');
    expect(formatScalar(12345678.9)).toBe('1.235e+7');
    expect(formatScalar(Number.NaN)).toBe('NaN');
  });
});

describe('tensorValues', () => {
  it('flattens nested JSON arrays', () => {
    expect(
      tensorValues('FP32', [
        [1, 2],
        [3, 4],
      ]),
    ).toEqual([1, 2, 3, 4]);
  });

  it('decodes base64 little-endian bytes', () => {
    const bytes = new Uint8Array(new Float32Array([0.5, -2]).buffer);
    expect(tensorValues('FP32', encodeBase64(bytes))).toEqual([0.5, -2]);
  });
});

describe('formatTensor', () => {
  it('prints a vector on one line and a matrix one row per line', () => {
    expect(formatTensor([1, 2, 3], [3])).toBe('[1, 2, 3]');
    expect(formatTensor([1, 2, 3, 4, 5, 6], [2, 3])).toBe('[[1, 2, 3],\n [4, 5, 6]]');
    expect(formatTensor([1, 2, 3, 4], [2, 1, 2])).toBe('[[[1, 2]],\n [[3, 4]]]');
  });

  it('prints a scalar without brackets', () => {
    expect(formatTensor([0.25], [])).toBe('0.25');
  });

  it('summarises large tensors with the first and last items of each dim', () => {
    const values = Array.from({ length: 20 * 20 }, (_, i) => i);
    const text = formatTensor(values, [20, 20]);
    expect(text.split('\n')).toHaveLength(7);
    expect(text.startsWith('[[0, 1, 2, …, 17, 18, 19],\n [20, 21, 22, …, 37, 38, 39],')).toBe(true);
    expect(text).toContain(' …,\n');
    expect(text.endsWith('[380, 381, 382, …, 397, 398, 399]]')).toBe(true);
    expect(isSummarised([20, 20])).toBe(true);
  });

  it('prints every value when asked to show all', () => {
    const values = Array.from({ length: SUMMARY_THRESHOLD + 1 }, (_, i) => i);
    const text = formatTensor(values, [values.length], { showAll: true });
    expect(text).not.toContain('…');
    expect(text.split(', ')).toHaveLength(values.length);
  });

  it('falls back to a flat list when the values do not fill the shape', () => {
    expect(formatTensor([1, 2, 3], [2, 2])).toBe('[1, 2, 3]');
  });

  it('leaves small tensors whole', () => {
    expect(isSummarised([2, 3])).toBe(false);
  });
});
