import { describe, expect, it } from 'vitest';
import { decodeTensorData, encodeBytesElements } from '@inferq/contracts';
import { outputArray, tensor, typedArrayFromBytes } from './tensors.ts';

describe('tensor', () => {
  it('takes the datatype from the array and sends small arrays as JSON', () => {
    const t = tensor('x', new Int32Array([1, -2, 3, 4]), [2, 2]);
    expect(t).toEqual({ name: 'x', datatype: 'INT32', shape: [2, 2], data: [1, -2, 3, 4] });
  });

  it('sends large arrays as base64 of the little-endian bytes, which the server decodes to the same values', () => {
    const values = Float32Array.from({ length: 128 }, (_, i) => i / 7);
    const t = tensor('features', values, [2, 64]);
    expect(typeof t.data).toBe('string');
    const decoded = decodeTensorData('FP32', t.shape, t.data);
    expect(decoded.ok && new Float32Array(decoded.value.buffer, decoded.value.byteOffset, 128)).toEqual(values);
  });

  it('always sends 64-bit integers as base64, exactly', () => {
    const t = tensor('ids', new BigInt64Array([2n ** 60n, -1n]), [2]);
    expect(typeof t.data).toBe('string');
    expect(outputArray({ name: 'ids', datatype: 'INT64', shape: [2], data: t.data, bytes: 16 }, 'INT64')).toEqual(new BigInt64Array([2n ** 60n, -1n]));
  });

  it('converts to another datatype through the codec (FP16 from Float32Array)', () => {
    const t = tensor('h', new Float32Array([1.5, -2]), [2], { datatype: 'FP16', encoding: 'base64' });
    expect(t.datatype).toBe('FP16');
    expect(outputArray({ name: 'h', datatype: 'FP16', shape: [2], data: t.data, bytes: 4 }, 'FP16')).toEqual(new Float32Array([1.5, -2]));
  });

  it.each<[string, () => unknown, RegExp]>([
    ['Infinity in JSON', () => tensor('x', new Float32Array([1, Infinity]), [2]), /tensor "x": element 1 \(value Infinity\) does not fit FP32/],
    ['NaN in JSON', () => tensor('x', new Float64Array([NaN]), [1]), /element 0 \(value NaN\) is not a number \(FP64\)/],
    ['a Float64Array value past FP32', () => tensor('x', new Float64Array([1e39]), [1], { datatype: 'FP32' }), /does not fit FP32/],
    ['a value past FP16, sent as base64', () => tensor('h', new Float32Array([65520]), [1], { datatype: 'FP16', encoding: 'base64' }), /does not fit FP16/],
    ['an INT32 value past INT8', () => tensor('i', new Int32Array([5, 128]), [2], { datatype: 'INT8' }), /element 1 \(value 128\) does not fit INT8/],
    ['a negative value as UINT64', () => tensor('u', new BigInt64Array([-1n]), [1], { datatype: 'UINT64' }), /does not fit UINT64/],
    ['2 as BOOL', () => tensor('b', new Uint8Array([0, 2]), [2], { datatype: 'BOOL' }), /element 1 \(value 2\) is not a valid BOOL/],
  ])('refuses locally, as the server would: %s', (_what, make, detail) => {
    expect(make).toThrow(RangeError);
    expect(make).toThrow(detail);
    expect(make).toThrow(/^INPUT_DATA_INVALID: /);
  });

  it('refuses a shape that does not hold the array', () => {
    expect(() => tensor('x', new Float32Array(6), [2, 2])).toThrow(RangeError);
  });
});

describe('outputArray', () => {
  it('reads JSON data, flat or nested, into the typed array of the datatype', () => {
    expect(
      outputArray(
        {
          name: 'y',
          datatype: 'FP32',
          shape: [2, 2],
          data: [
            [1, 2],
            [3, 4.5],
          ],
          bytes: 16,
        },
        'FP32',
      ),
    ).toEqual(new Float32Array([1, 2, 3, 4.5]));
    expect(outputArray({ name: 'b', datatype: 'BOOL', shape: [2], data: [true, false], bytes: 2 })).toEqual(new Uint8Array([1, 0]));
  });

  it('throws when the datatype is not the one expected, or the output is only a URL', () => {
    expect(() => outputArray({ name: 'y', datatype: 'FP64', shape: [1], data: [1], bytes: 8 }, 'FP32')).toThrow(/FP64, not FP32/);
    expect(() => outputArray({ name: 'y', datatype: 'FP32', shape: [1], url: 'http://s3/x', bytes: 4 })).toThrow(/readOutput/);
  });

  it('reads raw downloaded bytes, wherever they sit in their buffer', () => {
    const raw = new Uint8Array(13);
    raw.set(new Uint8Array(new Float32Array([7, 8, 9]).buffer), 1);
    expect(typedArrayFromBytes('FP32', raw.subarray(1))).toEqual(new Float32Array([7, 8, 9]));
  });
});

describe('BYTES (strings)', () => {
  it('sends strings as JSON strings and reads BYTES outputs back as strings, inline or raw', () => {
    const t = tensor('words', ['cat', 'héllo'], [1, 2]);
    expect(t).toEqual({ name: 'words', datatype: 'BYTES', shape: [1, 2], data: ['cat', 'héllo'] });
    expect(outputArray({ name: 'w', datatype: 'BYTES', shape: [1, 2], data: ['cat', 'héllo'], bytes: 15 }, 'BYTES')).toEqual(['cat', 'héllo']);
    expect(typedArrayFromBytes('BYTES', encodeBytesElements(['a', '', '日本']))).toEqual(['a', '', '日本']);
    expect(() => tensor('words', ['a'], [2])).toThrow(/INPUT_DATA_INVALID/);
  });
});
