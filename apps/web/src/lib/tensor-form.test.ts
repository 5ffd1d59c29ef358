import { describe, expect, it } from 'vitest';
import { MAX_FORM_ELEMENTS, buildTensorValues, formatSpecShape, initialShape, parseTensorJson, shapeProblem } from './tensor-form.ts';

/** A deterministic stand-in for Math.random cycling through the given values. */
const sequence = (...values: number[]) => {
  let i = 0;
  return () => values[i++ % values.length]!;
};

describe('initialShape and formatSpecShape', () => {
  it('sets dynamic dims to 1 and shows them as ?', () => {
    expect(initialShape([-1, 3, -1, 32])).toEqual([1, 3, 1, 32]);
    expect(formatSpecShape([-1, 64])).toBe('[?, 64]');
    expect(formatSpecShape([])).toBe('[]');
  });
});

describe('shapeProblem', () => {
  it('accepts shapes the form can edit and names the limit otherwise', () => {
    expect(shapeProblem([1, 64])).toBeUndefined();
    expect(shapeProblem([0, 64])).toBeUndefined();
    expect(shapeProblem([1, 1.5])).toMatch(/whole number/);
    expect(shapeProblem([MAX_FORM_ELEMENTS + 1])).toMatch(/too many to edit here/);
  });
});

describe('buildTensorValues', () => {
  it('builds zeros of the element count, false for BOOL, empty strings for BYTES', () => {
    expect(buildTensorValues('zeros', 'FP32', [2, 3])).toEqual([0, 0, 0, 0, 0, 0]);
    expect(buildTensorValues('zeros', 'BOOL', [2])).toEqual([false, false]);
    expect(buildTensorValues('zeros', 'BYTES', [2])).toEqual(['', '']);
    expect(buildTensorValues('zeros', 'INT64', [])).toEqual([0]);
  });

  it('draws floats in [-1, 1) with four decimals', () => {
    expect(buildTensorValues('random', 'FP32', [3], sequence(0, 0.5, 0.123456))).toEqual([-1, 0, -0.7531]);
  });

  it('draws integers inside the datatype range and small ones for wide types', () => {
    expect(buildTensorValues('random', 'UINT8', [2], sequence(0, 0.9999))).toEqual([0, 255]);
    expect(buildTensorValues('random', 'INT8', [2], sequence(0, 0.9999))).toEqual([-128, 127]);
    expect(buildTensorValues('random', 'INT64', [2], sequence(0, 0.9999))).toEqual([0, 99]);
    expect(buildTensorValues('random', 'BOOL', [2], sequence(0.2, 0.7))).toEqual([true, false]);
  });

  it('produces values the API codec accepts for every datatype', () => {
    for (const datatype of ['BOOL', 'UINT8', 'INT16', 'UINT32', 'INT64', 'UINT64', 'FP16', 'FP32', 'FP64', 'BYTES'] as const) {
      const values = buildTensorValues('random', datatype, [2, 2]);
      expect(parseTensorJson(JSON.stringify(values), datatype, [2, 2])).toEqual({ ok: true, data: values });
    }
  });
});

describe('parseTensorJson', () => {
  it('accepts flat and nested row-major arrays', () => {
    expect(parseTensorJson('[1, 2, 3, 4]', 'FP32', [2, 2])).toEqual({ ok: true, data: [1, 2, 3, 4] });
    expect(parseTensorJson('[[1, 2], [3, 4]]', 'INT32', [2, 2])).toEqual({
      ok: true,
      data: [
        [1, 2],
        [3, 4],
      ],
    });
  });

  it('accepts INT64 values beyond 2^53 as decimal strings', () => {
    expect(parseTensorJson('["9007199254740993"]', 'INT64', [1]).ok).toBe(true);
  });

  it('explains JSON that is not an array or not JSON', () => {
    expect(parseTensorJson('[1, 2', 'FP32', [2])).toMatchObject({ ok: false, message: expect.stringMatching(/^Not valid JSON/) });
    expect(parseTensorJson('{"a": 1}', 'FP32', [1])).toMatchObject({ ok: false, message: expect.stringMatching(/JSON array/) });
  });

  it('reports a wrong element count or a value outside the datatype', () => {
    expect(parseTensorJson('[1, 2, 3]', 'FP32', [2, 2])).toMatchObject({ ok: false, message: expect.stringMatching(/exactly 4 elements/) });
    expect(parseTensorJson('[1, 300]', 'UINT8', [2])).toMatchObject({
      ok: false,
      message: expect.stringMatching(/element 1 \(value 300\) does not fit UINT8/),
    });
    expect(parseTensorJson('[1.5]', 'INT32', [1]).ok).toBe(false);
    // JSON.parse reads 1e400 as Infinity, which no float datatype takes.
    expect(parseTensorJson('[1e400]', 'FP32', [1])).toMatchObject({ ok: false, message: 'element 0 (value Infinity) does not fit FP32' });
    expect(parseTensorJson('[65520]', 'FP16', [1])).toMatchObject({ ok: false, message: expect.stringMatching(/does not fit FP16/) });
  });
});
