import { describe, expect, it } from 'vitest';
import type { DataType } from './datatypes.ts';
import { decodeTensorData, elementPath, encodeTensorJson } from './tensor-codec.ts';

/** Decodes `[0, value]` as a tensor of shape [2]; the failure, or the decoded JSON values. */
const decodePair = (datatype: DataType, value: unknown) => {
  const r = decodeTensorData(datatype, [2], [0, value]);
  return r.ok ? { ok: true as const, values: encodeTensorJson(datatype, r.value) } : r;
};

describe('decodeTensorData: values that do not fit their datatype', () => {
  it.each<[DataType, unknown, RegExp]>([
    ['FP32', Infinity, /element 1 \(value Infinity\) does not fit FP32/],
    ['FP32', -Infinity, /value -Infinity\) does not fit FP32/],
    ['FP32', 1e39, /value 1e\+39\) does not fit FP32/],
    ['FP32', -3.5e38, /does not fit FP32/],
    ['FP32', NaN, /is not a number \(FP32\)/],
    ['FP64', Infinity, /does not fit FP64/],
    ['FP16', 65520, /value 65520\) does not fit FP16/],
    ['FP16', -70000, /does not fit FP16/],
    ['FP16', 1e39, /does not fit FP16/],
    ['INT8', 128, /does not fit INT8 \(-128…127\)/],
    ['INT8', -129, /does not fit INT8/],
    ['UINT8', -1, /does not fit UINT8 \(0…255\)/],
    ['UINT8', 256, /does not fit UINT8/],
    ['INT16', 32768, /does not fit INT16/],
    ['UINT16', 65536, /does not fit UINT16/],
    ['INT32', 2 ** 31, /does not fit INT32/],
    ['UINT32', 2 ** 32, /does not fit UINT32/],
    ['INT32', Infinity, /does not fit INT32/],
    ['INT8', 1.5, /is not an integer \(INT8\)/],
    ['INT32', '1', /is not a valid INT32/],
    ['INT64', '9223372036854775808', /does not fit INT64/],
    ['INT64', '-9223372036854775809', /does not fit INT64/],
    ['INT64', 2 ** 63, /beyond 2\^53 as a JSON number/],
    ['INT64', Infinity, /does not fit INT64/],
    ['INT64', 1.5, /is not an integer \(INT64\)/],
    ['INT64', '1.5', /is not a valid INT64/],
    ['UINT64', '-1', /does not fit UINT64/],
    ['UINT64', '18446744073709551616', /does not fit UINT64/],
    ['UINT64', -1, /does not fit UINT64/],
    ['BOOL', 2, /is not a valid BOOL \(true, false, 0 or 1\)/],
    ['BOOL', 'true', /is not a valid BOOL/],
    ['BOOL', null, /is not a valid BOOL/],
  ])('%s refuses %s', (datatype, value, detail) => {
    expect(decodePair(datatype, value)).toEqual({ ok: false, code: 'INPUT_DATA_INVALID', detail: expect.stringMatching(detail), element: [1] });
  });

  it('reads 1e400 in a JSON body (Infinity to JSON.parse) as a value that does not fit, in every float datatype', () => {
    const data = JSON.parse('[1e400, -1e400]') as unknown[];
    for (const datatype of ['FP16', 'FP32', 'FP64'] as const)
      expect(decodeTensorData(datatype, [2], data)).toMatchObject({ ok: false, detail: `element 0 (value Infinity) does not fit ${datatype}` });
  });

  it.each<[DataType, unknown, unknown]>([
    ['FP32', 3.4028234663852886e38, 3.4028234663852886e38],
    // Rounds down to FP32's largest finite value rather than up to Infinity.
    ['FP32', 3.4028235e38, 3.4028234663852886e38],
    ['FP32', 1e-50, 0],
    ['FP64', 1.7976931348623157e308, 1.7976931348623157e308],
    ['FP16', 65504, 65504],
    ['FP16', 65519, 65504],
    ['FP16', -65504, -65504],
    ['INT8', -128, -128],
    ['INT8', 127, 127],
    ['UINT8', 255, 255],
    ['UINT32', 2 ** 32 - 1, 2 ** 32 - 1],
    ['INT32', -(2 ** 31), -(2 ** 31)],
    ['INT64', '9223372036854775807', '9223372036854775807'],
    ['INT64', '-9223372036854775808', '-9223372036854775808'],
    ['INT64', Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
    ['UINT64', '18446744073709551615', '18446744073709551615'],
    ['BOOL', 1, true],
    ['BOOL', false, false],
  ])('%s takes the boundary value %s', (datatype, value, decoded) => {
    expect(decodePair(datatype, value)).toEqual({ ok: true, values: [datatype === 'BOOL' ? false : 0, decoded] });
  });

  it('names the element by its path in nested data', () => {
    const r = decodeTensorData(
      'UINT8',
      [2, 3],
      [
        [1, 2, 3],
        [4, 300, 6],
      ],
    );
    expect(r).toMatchObject({ ok: false, detail: expect.stringMatching(/^element 4 \(value 300\) does not fit UINT8/), element: [1, 1] });
  });

  it('gives no element for a failure about the whole tensor', () => {
    expect(decodeTensorData('FP32', [2], [1])).not.toHaveProperty('element');
  });
});

describe('elementPath', () => {
  it('walks ragged nesting in row-major order', () => {
    expect(elementPath([[0, [1, 2]], [], [3]], 2)).toEqual([0, 1, 1]);
    expect(elementPath([[0, [1, 2]], [], [3]], 3)).toEqual([2, 0]);
    expect(elementPath([0, 1, 2], 1)).toEqual([1]);
  });
});
