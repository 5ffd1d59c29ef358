import { describe, expect, it } from 'vitest';
import { DATATYPES, DataTypes, isFixedSizeDataType } from '@inferq/contracts';
import { NpyFormatError, readNpy, writeNpy } from './npy.ts';

/** A .npy file as numpy.save writes it (version 1.0), from a header dict and data bytes. */
function npyFile(dict: string, data: Uint8Array, major = 1): Uint8Array {
  const prefix = major === 1 ? 10 : 12;
  const header = dict.padEnd(Math.ceil((prefix + dict.length + 1) / 64) * 64 - prefix - 1, ' ') + '\n';
  const out = new Uint8Array(prefix + header.length + data.byteLength);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, major, 0]);
  const view = new DataView(out.buffer);
  if (major === 1) view.setUint16(8, header.length, true);
  else view.setUint32(8, header.length, true);
  out.set(new TextEncoder().encode(header), prefix);
  out.set(data, prefix + header.length);
  return out;
}

describe('npy', () => {
  it.each(DATATYPES.filter(isFixedSizeDataType))('round-trips %s', (datatype) => {
    const shape = [2, 3];
    const bytes = Uint8Array.from({ length: 6 * DataTypes[datatype].bytes }, (_, i) => (datatype === 'BOOL' ? i % 2 : (i * 37) % 251));
    const file = writeNpy({ datatype, shape, bytes });
    expect(file.byteLength % 64).toBe(bytes.byteLength % 64); // the data starts 64-byte aligned, as numpy writes it
    expect(readNpy(file)).toEqual({ datatype, shape, bytes });
  });

  it('reads what numpy.save writes, scalars and 1-d shapes included', () => {
    const data = new Uint8Array(new Float32Array([1.5, -2]).buffer);
    expect(readNpy(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", data))).toEqual({ datatype: 'FP32', shape: [2], bytes: data });
    const one = new Uint8Array(new BigInt64Array([7n]).buffer);
    expect(readNpy(npyFile("{'descr': '<i8', 'fortran_order': False, 'shape': (), }", one))).toMatchObject({ datatype: 'INT64', shape: [] });
    expect(readNpy(npyFile("{'descr': '|u1', 'fortran_order': False, 'shape': (1, 2), }", new Uint8Array(2), 2))).toMatchObject({ shape: [1, 2] });
    expect(writeNpy({ datatype: 'FP32', shape: [2], bytes: data })).toEqual(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", data));
  });

  it('refuses big-endian, Fortran order, unserved dtypes and a size that disagrees, with the reason', () => {
    const four = new Uint8Array(4);
    expect(() => readNpy(npyFile("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", four))).toThrow(/big-endian.*astype\('<f4'\)/);
    expect(() => readNpy(npyFile("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", four))).toThrow(/Fortran order/);
    expect(() => readNpy(npyFile("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", four))).toThrow(/'<c8' is not one inferq serves/);
    expect(() => readNpy(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", four))).toThrow(/4 bytes; <f4 of shape \(2\) is 8/);
    expect(() => readNpy(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]))).toThrow(NpyFormatError);
    expect(() => writeNpy({ datatype: 'FP32', shape: [3], bytes: four })).toThrow(RangeError);
  });
});
