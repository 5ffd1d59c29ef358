import { base64DecodedLength, decodeBase64, encodeBase64 } from './base64.ts';
import { DataTypes, type DataType } from './datatypes.ts';
import type { ErrorCode } from './errors.ts';
import { fromFloat16Bits, toFloat16Bits } from './float16.ts';

/** A tensor decoded to its little-endian bytes: the form the batcher concatenates. */
export interface RawTensor {
  name: string;
  datatype: DataType;
  shape: number[];
  data: Uint8Array;
}

export type JsonScalar = number | boolean | string;
export type CodecResult<T> = { ok: true; value: T } | { ok: false; code: ErrorCode; detail: string };

const fail = (code: ErrorCode, detail: string): { ok: false; code: ErrorCode; detail: string } => ({ ok: false, code, detail });

/** Element count of a concrete shape, or undefined when a dim is not a non-negative safe integer. */
export function elementCount(shape: readonly number[]): number | undefined {
  let n = 1;
  for (const d of shape) {
    if (!Number.isSafeInteger(d) || d < 0) return undefined;
    n *= d;
    if (!Number.isSafeInteger(n)) return undefined;
  }
  return n;
}

export const byteLengthOf = (datatype: DataType, shape: readonly number[]): number | undefined => {
  const n = elementCount(shape);
  return n === undefined ? undefined : n * DataTypes[datatype].bytes;
};

/** Byte size the data of a wire tensor decodes to, computed without decoding it. */
export function declaredByteLength(datatype: DataType, data: unknown): number {
  if (typeof data === 'string') return base64DecodedLength(data);
  return Array.isArray(data) ? data.length * DataTypes[datatype].bytes : 0;
}

function flatten(data: unknown[], expected: number): unknown[] | undefined {
  if (data.length === expected && !data.some(Array.isArray)) return data;
  const out: unknown[] = [];
  const stack: Array<{ arr: unknown[]; i: number }> = [{ arr: data, i: 0 }];
  while (stack.length > 0) {
    if (stack.length > 64) return undefined;
    const top = stack[stack.length - 1]!;
    if (top.i >= top.arr.length) {
      stack.pop();
      continue;
    }
    const v = top.arr[top.i++];
    if (Array.isArray(v)) stack.push({ arr: v, i: 0 });
    else if (out.push(v) > expected) return undefined;
  }
  return out;
}

const INT_RANGES: Partial<Record<DataType, [number, number]>> = {
  UINT8: [0, 0xff],
  UINT16: [0, 0xffff],
  UINT32: [0, 0xffffffff],
  INT8: [-0x80, 0x7f],
  INT16: [-0x8000, 0x7fff],
  INT32: [-0x80000000, 0x7fffffff],
};

function toBigInt(v: unknown, unsigned: boolean): bigint | undefined {
  let b: bigint;
  if (typeof v === 'number' && Number.isSafeInteger(v)) b = BigInt(v);
  else if (typeof v === 'string' && /^-?\d{1,20}$/.test(v)) b = BigInt(v);
  else return undefined;
  const [lo, hi] = unsigned ? [0n, 2n ** 64n - 1n] : [-(2n ** 63n), 2n ** 63n - 1n];
  return b < lo || b > hi ? undefined : b;
}

/** Writes JSON values into a typed array of the datatype; returns the index of the first bad value, or -1. */
function fillFromJson(datatype: DataType, values: unknown[], bytes: Uint8Array): number {
  const buf = bytes.buffer;
  const off = bytes.byteOffset;
  const n = values.length;
  switch (datatype) {
    case 'FP32':
    case 'FP64': {
      const arr = datatype === 'FP32' ? new Float32Array(buf, off, n) : new Float64Array(buf, off, n);
      for (let i = 0; i < n; i++) {
        const v = values[i];
        if (typeof v !== 'number') return i;
        arr[i] = v;
      }
      return -1;
    }
    case 'FP16': {
      const arr = new Uint16Array(buf, off, n);
      for (let i = 0; i < n; i++) {
        const v = values[i];
        if (typeof v !== 'number') return i;
        arr[i] = toFloat16Bits(v);
      }
      return -1;
    }
    case 'BOOL': {
      for (let i = 0; i < n; i++) {
        const v = values[i];
        if (v === true || v === 1) bytes[i] = 1;
        else if (v === false || v === 0) bytes[i] = 0;
        else return i;
      }
      return -1;
    }
    case 'INT64':
    case 'UINT64': {
      const unsigned = datatype === 'UINT64';
      const arr = unsigned ? new BigUint64Array(buf, off, n) : new BigInt64Array(buf, off, n);
      for (let i = 0; i < n; i++) {
        const b = toBigInt(values[i], unsigned);
        if (b === undefined) return i;
        arr[i] = b;
      }
      return -1;
    }
    default: {
      const Ctor = { UINT8: Uint8Array, UINT16: Uint16Array, UINT32: Uint32Array, INT8: Int8Array, INT16: Int16Array, INT32: Int32Array }[datatype];
      const [lo, hi] = INT_RANGES[datatype]!;
      const arr = new Ctor(buf as ArrayBuffer, off, n);
      for (let i = 0; i < n; i++) {
        const v = values[i];
        if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) return i;
        arr[i] = v;
      }
      return -1;
    }
  }
}

/**
 * Decodes wire tensor data (a flat or nested JSON array in row-major order, or
 * base64 of the little-endian bytes) to bytes, checking it against the shape.
 */
export function decodeTensorData(datatype: DataType, shape: readonly number[], data: unknown): CodecResult<Uint8Array> {
  const count = elementCount(shape);
  if (count === undefined) return fail('INPUT_SHAPE_MISMATCH', `shape [${shape.join(',')}] is not a list of non-negative integers with a safe product`);
  const byteLength = count * DataTypes[datatype].bytes;
  if (typeof data === 'string') {
    const bytes = decodeBase64(data);
    if (!bytes) return fail('INPUT_DATA_INVALID', 'data is a string but not valid base64');
    if (bytes.byteLength !== byteLength)
      return fail('INPUT_DATA_INVALID', `base64 data has ${bytes.byteLength} bytes; ${datatype} of shape [${shape.join(',')}] needs ${byteLength}`);
    // Copy into an aligned buffer of its own so typed-array views over it are valid.
    return { ok: true, value: bytes.byteOffset % 8 === 0 ? bytes : bytes.slice() };
  }
  if (!Array.isArray(data)) return fail('INPUT_DATA_INVALID', 'data must be an array or a base64 string');
  const values = flatten(data, count);
  if (!values || values.length !== count) return fail('INPUT_DATA_INVALID', `data does not hold exactly ${count} elements for shape [${shape.join(',')}]`);
  const bytes = new Uint8Array(byteLength);
  const bad = fillFromJson(datatype, values, bytes);
  if (bad >= 0) return fail('INPUT_DATA_INVALID', `element ${bad} (${JSON.stringify(values[bad])?.slice(0, 40)}) is not a valid ${datatype}`);
  return { ok: true, value: bytes };
}

/** Turns little-endian tensor bytes back into JSON values (INT64 beyond 2^53 become strings). */
export function encodeTensorJson(datatype: DataType, bytes: Uint8Array): JsonScalar[] {
  const aligned = bytes.byteOffset % 8 === 0 ? bytes : bytes.slice();
  const { buffer: buf, byteOffset: off } = aligned;
  const n = bytes.byteLength / DataTypes[datatype].bytes;
  switch (datatype) {
    case 'BOOL':
      return Array.from(aligned, (v) => v !== 0);
    case 'FP16':
      return Array.from(new Uint16Array(buf, off, n), fromFloat16Bits);
    case 'INT64':
    case 'UINT64': {
      const arr = datatype === 'INT64' ? new BigInt64Array(buf, off, n) : new BigUint64Array(buf, off, n);
      return Array.from(arr, (b) => {
        const v = Number(b);
        return Number.isSafeInteger(v) ? v : b.toString();
      });
    }
    default: {
      const Ctor = {
        UINT8: Uint8Array,
        UINT16: Uint16Array,
        UINT32: Uint32Array,
        INT8: Int8Array,
        INT16: Int16Array,
        INT32: Int32Array,
        FP32: Float32Array,
        FP64: Float64Array,
      }[datatype];
      return Array.from(new Ctor(buf as ArrayBuffer, off, n));
    }
  }
}

export const encodeTensorBase64 = (bytes: Uint8Array): string => encodeBase64(bytes);
export { decodeBase64, encodeBase64 };
