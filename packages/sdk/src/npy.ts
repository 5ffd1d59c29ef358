import { DataTypes, elementCount, type FixedSizeDataType } from '@inferq/contracts';

// NumPy's .npy format (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html), as far as inferq's
// tensors need it: little-endian, C order, the datatypes inferq serves. Browser-safe: Uint8Array and DataView only.
// (npyjs reads .npy but does not write it, nor refuse what it cannot read with a reason.)

/** A tensor read from, or to write as, a .npy file: its datatype, shape and little-endian row-major bytes. */
export interface NpyTensor {
  datatype: FixedSizeDataType;
  shape: number[];
  bytes: Uint8Array;
}

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY
const ALIGN = 64;

/** NumPy's type code (kind + item size) of each datatype; `<` little-endian, `|` for one byte. */
const DESCR: Readonly<Record<FixedSizeDataType, string>> = {
  BOOL: '|b1',
  UINT8: '|u1',
  UINT16: '<u2',
  UINT32: '<u4',
  UINT64: '<u8',
  INT8: '|i1',
  INT16: '<i2',
  INT32: '<i4',
  INT64: '<i8',
  FP16: '<f2',
  FP32: '<f4',
  FP64: '<f8',
};
const BY_CODE = new Map(Object.entries(DESCR).map(([datatype, descr]) => [descr.slice(1), datatype as FixedSizeDataType]));

/** A .npy file that inferq cannot read, with the reason. */
export class NpyFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NpyFormatError';
  }
}

function dataTypeOfDescr(descr: string): FixedSizeDataType {
  const order = descr[0];
  const code = descr.slice(1);
  const datatype = BY_CODE.get(code);
  if (!datatype) throw new NpyFormatError(`.npy dtype '${descr}' is not one inferq serves (${Object.values(DESCR).join(', ')})`);
  // One-byte types have no byte order; numpy writes `|` but `<`, `>` and `=` mean the same for them.
  if (DataTypes[datatype].bytes > 1 && order === '>')
    throw new NpyFormatError(`.npy dtype '${descr}' is big-endian; inferq reads little-endian: save it with arr.astype('<${code}')`);
  if (DataTypes[datatype].bytes > 1 && order !== '<' && order !== '=') throw new NpyFormatError(`.npy dtype '${descr}' has no little-endian byte order`);
  return datatype;
}

/** The header's Python dict literal: `{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }`. */
function parseHeader(text: string): { descr: string; fortranOrder: boolean; shape: number[] } {
  const descr = /'descr'\s*:\s*'([^']*)'/.exec(text)?.[1];
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(text)?.[1];
  const shapeText = /'shape'\s*:\s*\(([^)]*)\)/.exec(text)?.[1];
  if (descr === undefined || fortran === undefined || shapeText === undefined)
    throw new NpyFormatError(`.npy header is not a plain array's (a structured dtype?): ${text.trim().slice(0, 120)}`);
  const shape = shapeText
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => Number(s.replace(/L$/, '')));
  if (!shape.every((d) => Number.isSafeInteger(d) && d >= 0)) throw new NpyFormatError(`.npy shape (${shapeText}) is not a list of sizes`);
  return { descr, fortranOrder: fortran === 'True', shape };
}

/**
 * Reads a .npy file (format version 1, 2 or 3). Refuses, with the reason, big-endian data, Fortran order,
 * dtypes inferq does not serve and a file whose size disagrees with its header. The bytes are a view into `file`.
 */
export function readNpy(file: Uint8Array): NpyTensor {
  if (file.byteLength < 10 || MAGIC.some((b, i) => file[i] !== b)) throw new NpyFormatError('not a .npy file (no \\x93NUMPY magic)');
  const major = file[6]!;
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  if (major < 1 || major > 3) throw new NpyFormatError(`.npy format version ${major} is not one inferq reads (1, 2 or 3)`);
  const lengthBytes = major === 1 ? 2 : 4;
  const headerLength = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const dataStart = 8 + lengthBytes + headerLength;
  if (dataStart > file.byteLength) throw new NpyFormatError(`.npy header claims ${headerLength} bytes; the file has ${file.byteLength}`);
  const text = new TextDecoder(major === 3 ? 'utf-8' : 'latin1').decode(file.subarray(8 + lengthBytes, dataStart));
  const header = parseHeader(text);
  if (header.fortranOrder) throw new NpyFormatError('.npy array is in Fortran order; inferq reads C order: save np.ascontiguousarray(arr)');
  const datatype = dataTypeOfDescr(header.descr);
  const expected = (elementCount(header.shape) ?? 0) * DataTypes[datatype].bytes;
  const bytes = file.subarray(dataStart);
  if (bytes.byteLength !== expected)
    throw new NpyFormatError(`.npy data is ${bytes.byteLength} bytes; ${header.descr} of shape (${header.shape.join(', ')}) is ${expected}`);
  return { datatype, shape: header.shape, bytes };
}

/** Writes a .npy file (format version 1.0, or 2.0 when the header needs it), little-endian and C order, as numpy.save does. */
export function writeNpy(tensor: NpyTensor): Uint8Array {
  const { datatype, shape, bytes } = tensor;
  const expected = (elementCount(shape) ?? -1) * DataTypes[datatype].bytes;
  if (bytes.byteLength !== expected) throw new RangeError(`${bytes.byteLength} bytes are not ${datatype} of shape [${shape.join(', ')}] (${expected} bytes)`);
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  const dict = `{'descr': '${DESCR[datatype]}', 'fortran_order': False, 'shape': ${shapeText}, }`;
  const major = dict.length + 1 + 10 > 0xffff ? 2 : 1;
  const prefix = 8 + (major === 1 ? 2 : 4);
  // Space-padded to a multiple of 64 bytes, ending in a newline, so the data is aligned.
  const padded = dict.padEnd(Math.ceil((prefix + dict.length + 1) / ALIGN) * ALIGN - prefix - 1, ' ') + '\n';
  const out = new Uint8Array(prefix + padded.length + bytes.byteLength);
  out.set(MAGIC, 0);
  out[6] = major;
  out[7] = 0;
  const view = new DataView(out.buffer);
  if (major === 1) view.setUint16(8, padded.length, true);
  else view.setUint32(8, padded.length, true);
  for (let i = 0; i < padded.length; i++) out[prefix + i] = padded.charCodeAt(i);
  out.set(bytes, prefix + padded.length);
  return out;
}
