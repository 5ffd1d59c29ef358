import { DataTypes, elementCount, isFixedSizeDataType, type DataType, type FixedSizeDataType } from '@inferq/contracts';
import { NpyFormatError, readNpy } from '@inferq/sdk';
import { formatSpecShape } from './tensor-form.ts';

/** A tensor input's values from a file: .npy (datatype and shape from its header) or raw little-endian bytes. */
export interface TensorFile {
  fileName: string;
  /** The file's size in bytes. */
  size: number;
  datatype: FixedSizeDataType;
  shape: number[];
  /** The tensor's little-endian row-major bytes (a .npy file's data, without its header). */
  bytes: Uint8Array;
}

/** What the model's signature says of the input, and the shape the form holds now (its dynamic dims as set). */
export interface TensorSlot {
  name: string;
  datatype: DataType;
  specShape: readonly number[];
  shape: readonly number[];
}

export type TensorFileResult = { ok: true; file: TensorFile } | { ok: false; message: string };

const fitsSignature = (shape: readonly number[], specShape: readonly number[]) =>
  shape.length === specShape.length && shape.every((d, i) => specShape[i] === -1 || specShape[i] === d);

const sizeOf = (datatype: FixedSizeDataType, shape: readonly number[]) => (elementCount(shape) ?? 0) * DataTypes[datatype].bytes;

/** A raw file's shape: the form's, or with one dynamic dim, that dim from the file's size. */
function rawShape(slot: TensorSlot & { datatype: FixedSizeDataType }, size: number): number[] {
  const dynamic = slot.specShape.flatMap((d, i) => (d === -1 ? [i] : []));
  if (dynamic.length !== 1) return [...slot.shape];
  const fixed = slot.specShape.reduce((n, d) => (d === -1 ? n : n * d), 1) * DataTypes[slot.datatype].bytes;
  if (fixed === 0 || size % fixed !== 0) return [...slot.shape];
  return slot.specShape.map((d) => (d === -1 ? size / fixed : d));
}

/** Reads a dropped or picked file for an input, checked against the model's signature, with a message fit to show inline. */
export function readTensorFile(fileName: string, content: Uint8Array, slot: TensorSlot): TensorFileResult {
  const size = content.byteLength;
  if (!isFixedSizeDataType(slot.datatype)) return { ok: false, message: `${slot.name} takes strings (BYTES): type them instead of a file.` };
  const fixed = { ...slot, datatype: slot.datatype };
  if (/\.npy$/i.test(fileName)) {
    let npy;
    try {
      npy = readNpy(content);
    } catch (err) {
      if (err instanceof NpyFormatError) return { ok: false, message: `${fileName}: ${err.message}` };
      throw err;
    }
    if (npy.datatype !== slot.datatype) return { ok: false, message: `${fileName} holds ${npy.datatype}; ${slot.name} takes ${slot.datatype}.` };
    if (!fitsSignature(npy.shape, slot.specShape))
      return { ok: false, message: `${fileName} has shape [${npy.shape.join(', ')}]; ${slot.name} takes ${formatSpecShape(slot.specShape)}.` };
    return { ok: true, file: { fileName, size, datatype: npy.datatype, shape: npy.shape, bytes: npy.bytes } };
  }
  const shape = rawShape(fixed, size);
  const expected = sizeOf(fixed.datatype, shape);
  if (size !== expected)
    return {
      ok: false,
      message:
        `${fileName} is ${size.toLocaleString()} bytes; ${slot.datatype} [${shape.join(', ')}] is ${expected.toLocaleString()} ` +
        '(raw files are little-endian, row-major; a .npy file carries its own shape).',
    };
  return { ok: true, file: { fileName, size, datatype: fixed.datatype, shape, bytes: content } };
}
