import {
  DataTypes,
  decodeBytesStrings,
  decodeTensorData,
  elementCount,
  encodeTensorBase64,
  encodeTensorJson,
  toFloat16Bits,
  type DataType,
  type FixedSizeDataType,
  type InputTensor,
  type OutputTensor,
} from '@inferq/contracts';

/** The typed array each datatype reads back into. FP16 is widened to Float32Array; BOOL is 0/1 bytes; BYTES, strings. */
export interface TypedArrayOf {
  BOOL: Uint8Array;
  UINT8: Uint8Array;
  UINT16: Uint16Array;
  UINT32: Uint32Array;
  UINT64: BigUint64Array;
  INT8: Int8Array;
  INT16: Int16Array;
  INT32: Int32Array;
  INT64: BigInt64Array;
  FP16: Float32Array;
  FP32: Float32Array;
  FP64: Float64Array;
  BYTES: string[];
}
export type TensorArray = TypedArrayOf[FixedSizeDataType];

export interface TensorOptions {
  /** Another datatype than the array's own, e.g. `FP16` from a Float32Array or `BOOL` from a Uint8Array; the values are converted. */
  datatype?: DataType;
  /**
   * `base64` sends the little-endian bytes (smaller and faster to parse); `json` a flat array.
   * @default 'auto': base64 from 256 bytes up, and always for 64-bit integers, which JSON numbers cannot hold exactly
   */
  encoding?: 'auto' | 'json' | 'base64';
}

const BASE64_FROM_BYTES = 256;
// Typed arrays use the platform's byte order; the wire is little-endian.
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

const ARRAY_TYPES: ReadonlyArray<[new (length: number) => TensorArray, FixedSizeDataType]> = [
  [Float32Array, 'FP32'],
  [Float64Array, 'FP64'],
  [Int8Array, 'INT8'],
  [Uint8Array, 'UINT8'],
  [Int16Array, 'INT16'],
  [Uint16Array, 'UINT16'],
  [Int32Array, 'INT32'],
  [Uint32Array, 'UINT32'],
  [BigInt64Array, 'INT64'],
  [BigUint64Array, 'UINT64'],
];

/** The datatype a typed array holds natively. */
export function dataTypeOfArray(values: TensorArray): FixedSizeDataType {
  for (const [Ctor, datatype] of ARRAY_TYPES) if (values instanceof Ctor) return datatype;
  throw new TypeError('not a typed array inferq can send');
}

const bytesOf = (values: TensorArray): Uint8Array => new Uint8Array(values.buffer, values.byteOffset, values.byteLength);

/** A KServe v2 input tensor from a typed array, e.g. `tensor('features', new Float32Array(64), [1, 64])`. */
export function tensor(name: string, values: TensorArray | readonly string[], shape: readonly number[], options: TensorOptions = {}): InputTensor {
  // Strings are BYTES and go as JSON strings, as Triton's and KServe's clients send them.
  if (!ArrayBuffer.isView(values)) return bytesTensor(name, values, shape);
  const own = dataTypeOfArray(values);
  const datatype = options.datatype ?? own;
  const count = elementCount(shape);
  if (count !== values.length)
    throw new RangeError(`shape [${shape.join(',')}] holds ${count ?? 'no valid number of'} elements; the array has ${values.length}`);
  const wide = datatype === 'INT64' || datatype === 'UINT64';
  const byteLength = count * (DataTypes[datatype].bytes ?? 0);
  const encoding = options.encoding ?? 'auto';
  const base64 = LITTLE_ENDIAN && (encoding === 'base64' || (encoding === 'auto' && (wide || byteLength >= BASE64_FROM_BYTES)));
  if (base64 && datatype === own) return { name, datatype, shape: [...shape], data: encodeTensorBase64(bytesOf(values)) };
  const json = Array.from(values as ArrayLike<number | bigint>, (v) => (typeof v === 'bigint' ? v.toString() : v));
  // JSON values and conversions (FP16, BOOL, …) go through the same codec the server uses, so a value the
  // server would refuse (NaN or ±Infinity, a float past FP32's range, an integer outside INT8's) throws here.
  const converted = decodeTensorData(datatype, shape, json);
  if (!converted.ok) throw new RangeError(`${converted.code}: tensor "${name}": ${converted.detail}`);
  return { name, datatype, shape: [...shape], data: base64 ? encodeTensorBase64(converted.value) : json };
}

function bytesTensor(name: string, values: readonly string[], shape: readonly number[]): InputTensor {
  const converted = decodeTensorData('BYTES', shape, values);
  if (!converted.ok) throw new RangeError(`${converted.code}: tensor "${name}": ${converted.detail}`);
  return { name, datatype: 'BYTES', shape: [...shape], data: [...values] };
}

function viewAs(datatype: DataType, bytes: Uint8Array): TensorArray | string[] {
  if (datatype === 'BYTES') return decodeBytesStrings(bytes);
  const aligned = bytes.byteOffset % 8 === 0 ? bytes : bytes.slice();
  const { buffer, byteOffset } = aligned;
  const n = bytes.byteLength / DataTypes[datatype].bytes;
  switch (datatype) {
    case 'FP16':
      return Float32Array.from(encodeTensorJson('FP16', bytes) as number[]);
    case 'BOOL':
    case 'UINT8':
      return new Uint8Array(buffer, byteOffset, n).slice();
    case 'UINT16':
      return new Uint16Array(buffer, byteOffset, n).slice();
    case 'UINT32':
      return new Uint32Array(buffer, byteOffset, n).slice();
    case 'UINT64':
      return new BigUint64Array(buffer, byteOffset, n).slice();
    case 'INT8':
      return new Int8Array(buffer, byteOffset, n).slice();
    case 'INT16':
      return new Int16Array(buffer, byteOffset, n).slice();
    case 'INT32':
      return new Int32Array(buffer, byteOffset, n).slice();
    case 'INT64':
      return new BigInt64Array(buffer, byteOffset, n).slice();
    case 'FP32':
      return new Float32Array(buffer, byteOffset, n).slice();
    case 'FP64':
      return new Float64Array(buffer, byteOffset, n).slice();
  }
}

/** Little-endian tensor bytes (a raw download) as a typed array of the datatype. */
export function typedArrayFromBytes<D extends DataType>(datatype: D, bytes: Uint8Array): TypedArrayOf[D] {
  const size = DataTypes[datatype].bytes;
  if (size !== undefined && bytes.byteLength % size !== 0) throw new RangeError(`${bytes.byteLength} bytes are not a whole number of ${datatype} elements`);
  return viewAs(datatype, bytes) as TypedArrayOf[D];
}

/** A typed array's values as little-endian bytes of `datatype` (FP16 from its widened Float32Array), e.g. to write a file. */
export function bytesOfArray(datatype: DataType, values: TensorArray): Uint8Array {
  if (datatype === 'FP16') return new Uint8Array(Uint16Array.from(values as Float32Array, toFloat16Bits).buffer);
  if (!LITTLE_ENDIAN) throw new RangeError('this platform is big-endian; inferq tensors are little-endian');
  return bytesOf(values);
}

function checkDatatype<D extends DataType>(actual: DataType, expected: D | undefined, name: string): asserts actual is D {
  if (expected !== undefined && actual !== expected) throw new TypeError(`output ${name} is ${actual}, not ${expected}`);
}

/**
 * An output's inline data (JSON values or base64) as a typed array. Pass the
 * datatype you expect to get its array type; a mismatch throws. Outputs too
 * large to be inline have only a `url`: read them with `client.jobs.readOutput`.
 */
export function outputArray<D extends DataType = DataType>(output: OutputTensor, datatype?: D): TypedArrayOf[D] {
  checkDatatype(output.datatype, datatype, output.name);
  if (output.data === undefined) throw new TypeError(`output ${output.name} is not inline; read it with client.jobs.readOutput`);
  const decoded = decodeTensorData(output.datatype, output.shape, output.data);
  if (!decoded.ok) throw new RangeError(`output ${output.name}: ${decoded.detail}`);
  return typedArrayFromBytes(output.datatype, decoded.value);
}
