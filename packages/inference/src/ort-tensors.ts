import { DataTypes, dataTypeFromOrt, decodeBytesStrings, elementCount, encodeBytesElements, type RawTensor } from '@inferq/contracts';
import { Tensor } from 'onnxruntime-node';

export type OrtTypedArray =
  Float32Array | Float64Array | Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | BigInt64Array | BigUint64Array;
type TypedArrayCtor = new (buffer: ArrayBuffer, byteOffset: number, length: number) => OrtTypedArray;

// The typed array onnxruntime-node accepts for each tensor type: float16 goes
// as its raw bits in a Uint16Array (Node 20 has no Float16Array) and bool as
// one byte per element.
const ARRAY_FOR_ORT_TYPE: Record<string, TypedArrayCtor> = {
  float32: Float32Array,
  float64: Float64Array,
  float16: Uint16Array,
  bool: Uint8Array,
  int8: Int8Array,
  uint8: Uint8Array,
  int16: Int16Array,
  uint16: Uint16Array,
  int32: Int32Array,
  uint32: Uint32Array,
  int64: BigInt64Array,
  uint64: BigUint64Array,
};

/**
 * `new Tensor(type, data, dims)` that onnxruntime-node can read on every Node. Where the runtime has
 * Float16Array (Node 24), onnxruntime-common turns a float16 tensor's Uint16Array into a Float16Array over
 * the same bytes, and onnxruntime-node's binding (1.30) reads that array's byte length as 0: every float16
 * input fails with "not enough space: expected N, got 0" (microsoft/onnxruntime PR 32323, not yet released).
 * The tensor is handed back its Uint16Array, the same bytes, which the binding reads on every runtime.
 */
export function ortTensor(type: string, data: OrtTypedArray, dims: readonly number[]): Tensor {
  const tensor = new Tensor(type as 'float32', data as Float32Array, dims);
  if (type === 'float16' && data instanceof Uint16Array && !(tensor.data instanceof Uint16Array)) {
    (tensor as unknown as { cpuData: Uint16Array }).cpuData = data;
  }
  return tensor;
}

/** An onnxruntime tensor over the tensor's bytes: no copy unless they are misaligned for the element type. */
export function toOrtTensor(raw: RawTensor): Tensor {
  // BYTES: onnxruntime-node takes string tensors as JavaScript strings (the API admits UTF-8 elements only).
  if (raw.datatype === 'BYTES') return new Tensor('string', decodeBytesStrings(raw.data, elementCount(raw.shape)), raw.shape);
  const { bytes, ort: type } = DataTypes[raw.datatype];
  const Ctor = ARRAY_FOR_ORT_TYPE[type]!;
  const data = raw.data.byteOffset % bytes === 0 ? raw.data : raw.data.slice();
  const view = new Ctor(data.buffer as ArrayBuffer, data.byteOffset, data.byteLength / bytes);
  return ortTensor(type, view, raw.shape);
}

/** The bytes of an onnxruntime output tensor as a RawTensor (a view, no copy; string tensors framed as BYTES). */
export function fromOrtTensor(name: string, tensor: Tensor): RawTensor {
  const datatype = dataTypeFromOrt(tensor.type);
  if (!datatype) throw new Error(`output "${name}" has type ${tensor.type}, which inferq cannot serve`);
  const data = tensor.data;
  if (datatype === 'BYTES') {
    if (!Array.isArray(data)) throw new Error(`output "${name}" is a string tensor without strings`);
    return { name, datatype, shape: [...tensor.dims], data: encodeBytesElements(data as string[]) };
  }
  if (!ArrayBuffer.isView(data)) throw new Error(`output "${name}" has no tensor data on the CPU`);
  return { name, datatype, shape: [...tensor.dims], data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
}
