/**
 * Tensor datatypes in the KServe v2 / Open Inference Protocol naming, with the
 * matching ONNX TensorProto type and onnxruntime tensor type. `bytes` is the
 * element size; BYTES (ONNX STRING, onnxruntime 'string') has none: its raw
 * form is the binary extension's framing, a 4-byte little-endian length then
 * the element's bytes, element after element (`encodeBytesElements`).
 */
export const DataTypes = {
  BOOL: { bytes: 1, onnx: 9, ort: 'bool' },
  UINT8: { bytes: 1, onnx: 2, ort: 'uint8' },
  UINT16: { bytes: 2, onnx: 4, ort: 'uint16' },
  UINT32: { bytes: 4, onnx: 12, ort: 'uint32' },
  UINT64: { bytes: 8, onnx: 13, ort: 'uint64' },
  INT8: { bytes: 1, onnx: 3, ort: 'int8' },
  INT16: { bytes: 2, onnx: 5, ort: 'int16' },
  INT32: { bytes: 4, onnx: 6, ort: 'int32' },
  INT64: { bytes: 8, onnx: 7, ort: 'int64' },
  FP16: { bytes: 2, onnx: 10, ort: 'float16' },
  FP32: { bytes: 4, onnx: 1, ort: 'float32' },
  FP64: { bytes: 8, onnx: 11, ort: 'float64' },
  BYTES: { bytes: undefined, onnx: 8, ort: 'string' },
} as const;

export type DataType = keyof typeof DataTypes;
export const DATATYPES = Object.keys(DataTypes) as DataType[];

/** A datatype whose elements all have one size: every one but BYTES. */
export type FixedSizeDataType = Exclude<DataType, 'BYTES'>;
export const isFixedSizeDataType = (datatype: DataType): datatype is FixedSizeDataType => datatype !== 'BYTES';

export const isDataType = (value: unknown): value is DataType => typeof value === 'string' && Object.hasOwn(DataTypes, value);

const BY_ONNX = new Map<number, DataType>(DATATYPES.map((d) => [DataTypes[d].onnx, d]));
const BY_ORT = new Map<string, DataType>(DATATYPES.map((d) => [DataTypes[d].ort, d]));

/** ONNX TensorProto.DataType number → datatype, or undefined when inferq cannot serve it. */
export const dataTypeFromOnnx = (onnxType: number): DataType | undefined => BY_ONNX.get(onnxType);
export const dataTypeFromOrt = (ortType: string): DataType | undefined => BY_ORT.get(ortType);

/** ONNX type names for messages about types inferq does not serve. */
export const ONNX_TYPE_NAMES: Record<number, string> = {
  0: 'UNDEFINED',
  1: 'FLOAT',
  2: 'UINT8',
  3: 'INT8',
  4: 'UINT16',
  5: 'INT16',
  6: 'INT32',
  7: 'INT64',
  8: 'STRING',
  9: 'BOOL',
  10: 'FLOAT16',
  11: 'DOUBLE',
  12: 'UINT32',
  13: 'UINT64',
  14: 'COMPLEX64',
  15: 'COMPLEX128',
  16: 'BFLOAT16',
};
