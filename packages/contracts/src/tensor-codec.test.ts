import { describe, expect, it } from 'vitest';
import { encodeBytesElements } from './binary-framing/bytes-elements.ts';
import { dataTypeFromOnnx, dataTypeFromOrt, DataTypes, type DataType } from './datatypes.ts';
import {
  bytesTensorProblem,
  checkTensorBytes,
  declaredByteLength,
  decodeBytesStrings,
  decodeTensorData,
  elementPath,
  encodeBase64,
  encodeTensorJson,
  minByteLengthOf,
} from './tensor-codec.ts';

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

describe('BYTES tensors', () => {
  const framed = (...elements: (string | Uint8Array)[]) => encodeBytesElements(elements);

  it('has no element size: the fewest bytes are one 4-byte length per element', () => {
    expect(DataTypes.BYTES).toEqual({ bytes: undefined, onnx: 8, ort: 'string' });
    expect(dataTypeFromOnnx(8)).toBe('BYTES');
    expect(dataTypeFromOrt('string')).toBe('BYTES');
    expect(minByteLengthOf('BYTES', [2, 3])).toBe(24);
    expect(minByteLengthOf('FP32', [2, 3])).toBe(24);
    expect(minByteLengthOf('BYTES', [0])).toBe(0);
    expect(declaredByteLength('BYTES', ['ab', 'é'])).toBe(4 + 2 + 4 + 2);
  });

  it('takes JSON strings, flat or nested, as UTF-8 elements in the extension framing, and gives them back', () => {
    const decoded = decodeTensorData(
      'BYTES',
      [2, 2],
      [
        ['a', ''],
        ['héllo', '日本'],
      ],
    );
    expect(decoded).toEqual({ ok: true, value: framed('a', '', 'héllo', '日本') });
    expect(encodeTensorJson('BYTES', framed('a', '', 'héllo', '日本'))).toEqual(['a', '', 'héllo', '日本']);
  });

  it('takes base64 of the framed elements', () => {
    const bytes = framed('x', 'yz');
    expect(decodeTensorData('BYTES', [2], encodeBase64(bytes))).toEqual({ ok: true, value: bytes });
  });

  it('refuses elements that are not strings, naming the element', () => {
    expect(decodeTensorData('BYTES', [1, 2], [['a', 3]])).toEqual({
      ok: false,
      code: 'INPUT_DATA_INVALID',
      detail: 'element 1 (value 3) is not a valid BYTES element (a string)',
      element: [0, 1],
    });
  });

  it('refuses an element count other than the shape', () => {
    expect(decodeTensorData('BYTES', [3], ['a', 'b'])).toMatchObject({ ok: false, code: 'INPUT_DATA_INVALID', detail: expect.stringContaining('exactly 3') });
    expect(decodeTensorData('BYTES', [3], encodeBase64(framed('a', 'b')))).toMatchObject({ ok: false, code: 'INPUT_DATA_INVALID' });
    expect(decodeTensorData('BYTES', [1], encodeBase64(framed('a', 'b')))).toMatchObject({
      ok: false,
      detail: expect.stringContaining('left after the 1 BYTES elements'),
    });
  });

  it('refuses framing whose length runs past the data', () => {
    const bytes = framed('abc').subarray(0, 6);
    expect(checkTensorBytes('BYTES', [1], bytes)).toMatch(/claims 3 bytes/);
    expect(decodeTensorData('BYTES', [1], encodeBase64(bytes))).toMatchObject({ ok: false, code: 'INPUT_DATA_INVALID' });
  });

  it('refuses bytes that are not UTF-8, naming the element (onnxruntime string tensors hold text)', () => {
    const bytes = framed('ok', new Uint8Array([0xff, 0xfe]));
    expect(bytesTensorProblem(bytes, 2)).toEqual({ detail: 'BYTES element 1 is not valid UTF-8 (string tensors carry text only)', element: 1 });
    expect(decodeTensorData('BYTES', [2], encodeBase64(bytes))).toMatchObject({ ok: false, code: 'INPUT_DATA_INVALID', element: [1] });
    expect(checkTensorBytes('BYTES', [2], bytes)).toMatch(/element 1 is not valid UTF-8/);
  });

  it('refuses BOOL bytes other than 0 and 1, in base64 and in raw bytes, naming the element', () => {
    expect(decodeTensorData('BOOL', [3], Buffer.from([1, 0, 1]).toString('base64'))).toMatchObject({ ok: true });
    expect(decodeTensorData('BOOL', [3], Buffer.from([1, 0, 255]).toString('base64'))).toEqual({
      ok: false,
      code: 'INPUT_DATA_INVALID',
      detail: 'base64 data: element 2 (byte 255) is not a valid BOOL (0 or 1)',
      element: [2],
    });
    expect(checkTensorBytes('BOOL', [2], new Uint8Array([0, 1]))).toBeUndefined();
    expect(checkTensorBytes('BOOL', [2], new Uint8Array([2, 1]))).toBe('element 0 (byte 2) is not a valid BOOL (0 or 1)');
  });

  it('checks fixed-size tensors by byte length', () => {
    expect(checkTensorBytes('FP32', [2], new Uint8Array(8))).toBeUndefined();
    expect(checkTensorBytes('FP32', [2], new Uint8Array(7))).toBe('holds 7 bytes; FP32 of shape [2] needs 8');
    expect(checkTensorBytes('BYTES', [2], framed('', ''))).toBeUndefined();
  });

  it('reads every element of framed data, and throws on broken framing', () => {
    expect(decodeBytesStrings(new Uint8Array(0))).toEqual([]);
    expect(decodeBytesStrings(framed('a', 'b'))).toEqual(['a', 'b']);
    expect(() => decodeBytesStrings(framed('a').subarray(0, 3))).toThrow(RangeError);
  });
});
