import { base64DecodedLength, decodeBase64, encodeBase64 } from './base64.ts';
import { decodeBytesElements, encodeBytesElements, LENGTH_PREFIX_BYTES } from './binary-framing/bytes-elements.ts';
import { DataTypes, type DataType, type FixedSizeDataType } from './datatypes.ts';
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
/** A failure names the catalogue code; one about a single element also gives its path in the data (nested arrays: one index per level). */
export type CodecFailure = { ok: false; code: ErrorCode; detail: string; element?: number[] };
export type CodecResult<T> = { ok: true; value: T } | CodecFailure;

const fail = (code: ErrorCode, detail: string, element?: number[]): CodecFailure =>
  element ? { ok: false, code, detail, element } : { ok: false, code, detail };

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

/** Byte length of a tensor of a fixed-size datatype (BYTES has none: see `minByteLengthOf`, `checkTensorBytes`). */
export const byteLengthOf = (datatype: FixedSizeDataType, shape: readonly number[]): number | undefined => {
  const n = elementCount(shape);
  return n === undefined ? undefined : n * DataTypes[datatype].bytes;
};

/** The fewest bytes a tensor of the shape can take: its byte length, or for BYTES one length prefix per element (all empty). */
export function minByteLengthOf(datatype: DataType, shape: readonly number[]): number | undefined {
  if (datatype !== 'BYTES') return byteLengthOf(datatype, shape);
  const n = elementCount(shape);
  return n === undefined ? undefined : n * LENGTH_PREFIX_BYTES;
}

const utf8 = new TextEncoder();
const utf8Strict = new TextDecoder('utf-8', { fatal: true });
const utf8Lenient = new TextDecoder('utf-8');

/** Byte size the data of a wire tensor decodes to, computed without decoding it (BYTES strings: their UTF-8 length plus prefix). */
export function declaredByteLength(datatype: DataType, data: unknown): number {
  if (typeof data === 'string') return base64DecodedLength(data);
  if (!Array.isArray(data)) return 0;
  if (datatype !== 'BYTES') return data.length * DataTypes[datatype].bytes;
  return data.reduce<number>((n, e) => n + LENGTH_PREFIX_BYTES + (typeof e === 'string' ? utf8.encode(e).byteLength : 0), 0);
}

/**
 * Why framed BYTES data does not hold exactly `count` elements of UTF-8 text,
 * or undefined when it does. onnxruntime-node carries string tensors as
 * JavaScript strings, so bytes that are not UTF-8 could not reach the model
 * unchanged: they are refused, not replaced.
 */
export function bytesTensorProblem(data: Uint8Array, count: number): { detail: string; element?: number } | undefined {
  const elements = decodeBytesElements(data, count);
  if (!elements.ok) return { detail: elements.detail };
  for (let i = 0; i < elements.value.length; i++) {
    try {
      utf8Strict.decode(elements.value[i]);
    } catch {
      return { detail: `BYTES element ${i} is not valid UTF-8 (string tensors carry text only)`, element: i };
    }
  }
  return undefined;
}

/** The first element of BOOL bytes that is neither 0 nor 1, or undefined: the binary form of "BOOL other than true/false/0/1". */
function invalidBoolElement(data: Uint8Array): number | undefined {
  const at = data.findIndex((b) => b > 1);
  return at < 0 ? undefined : at;
}

const invalidBoolDetail = (data: Uint8Array, at: number) => `element ${at} (byte ${data[at]}) is not a valid BOOL (0 or 1)`;

/** Why bytes are not a tensor of the datatype and shape (a byte length, BYTES framing and UTF-8, BOOL bytes 0 or 1), or undefined when they are. */
export function checkTensorBytes(datatype: DataType, shape: readonly number[], data: Uint8Array): string | undefined {
  const count = elementCount(shape);
  if (count === undefined) return `shape [${shape.join(',')}] is not a list of non-negative integers with a safe product`;
  if (datatype === 'BYTES') return bytesTensorProblem(data, count)?.detail;
  const bytes = count * DataTypes[datatype].bytes;
  if (bytes !== data.byteLength) return `holds ${data.byteLength} bytes; ${datatype} of shape [${shape.join(',')}] needs ${bytes}`;
  const bool = datatype === 'BOOL' ? invalidBoolElement(data) : undefined;
  return bool === undefined ? undefined : invalidBoolDetail(data, bool);
}

/** The elements of a framed BYTES tensor as strings (UTF-8; a byte that is not becomes U+FFFD). Throws when the framing is broken. */
export function decodeBytesStrings(data: Uint8Array, count = Infinity): string[] {
  const elements = decodeBytesElements(data, count);
  if (!elements.ok) throw new RangeError(elements.detail);
  return elements.value.map((e) => utf8Lenient.decode(e));
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

/** The first element that does not fit: its flat index and why. */
interface BadElement {
  index: number;
  reason: string;
}

const FP16_INFINITY = 0x7c00;

/** Why a JSON value is not a float of the datatype, or undefined when it fits. */
function floatProblem(datatype: 'FP16' | 'FP32' | 'FP64', v: unknown): string | undefined {
  if (typeof v !== 'number') return `is not a valid ${datatype}`;
  if (Number.isNaN(v)) return `is not a number (${datatype})`;
  // JSON.parse reads 1e400 as Infinity; no float tensor takes a value that is not finite.
  if (!Number.isFinite(v)) return `does not fit ${datatype}`;
  if (datatype === 'FP32' && !Number.isFinite(Math.fround(v))) return `does not fit ${datatype}`;
  // Magnitudes from 65520 round to Infinity in FP16 (65504 is the largest finite half).
  if (datatype === 'FP16' && (toFloat16Bits(v) & 0x7fff) === FP16_INFINITY) return `does not fit ${datatype}`;
  return undefined;
}

/** Why a JSON value is not an integer of the range, or undefined when it fits. */
function integerProblem(datatype: DataType, v: unknown, lo: number, hi: number): string | undefined {
  if (typeof v !== 'number') return `is not a valid ${datatype}`;
  if (!Number.isInteger(v)) return Number.isFinite(v) ? `is not an integer (${datatype})` : `does not fit ${datatype}`;
  return v < lo || v > hi ? `does not fit ${datatype} (${lo}…${hi})` : undefined;
}

/** A 64-bit integer from a safe-integer JSON number or a decimal string, or why it is not one. */
function toBigInt(v: unknown, datatype: 'INT64' | 'UINT64'): bigint | string {
  let b: bigint;
  if (typeof v === 'number' && Number.isSafeInteger(v)) b = BigInt(v);
  else if (typeof v === 'string' && /^-?\d{1,20}$/.test(v)) b = BigInt(v);
  else if (typeof v === 'number' && Number.isInteger(v))
    return `is beyond 2^53 as a JSON number, which cannot hold it exactly; send ${datatype} values that large as decimal strings`;
  else if (typeof v === 'number') return Number.isFinite(v) ? `is not an integer (${datatype})` : `does not fit ${datatype}`;
  else if (typeof v === 'string' && /^-?\d+$/.test(v)) return `does not fit ${datatype}`;
  else return `is not a valid ${datatype} (a safe integer or a decimal string)`;
  const [lo, hi] = datatype === 'UINT64' ? [0n, 2n ** 64n - 1n] : [-(2n ** 63n), 2n ** 63n - 1n];
  return b < lo || b > hi ? `does not fit ${datatype} (${lo}…${hi})` : b;
}

/** Writes JSON values into a typed array of the datatype; returns the first value that does not fit, if any. */
function fillFromJson(datatype: FixedSizeDataType, values: unknown[], bytes: Uint8Array): BadElement | undefined {
  const buf = bytes.buffer;
  const off = bytes.byteOffset;
  const n = values.length;
  switch (datatype) {
    case 'FP32':
    case 'FP64': {
      const arr = datatype === 'FP32' ? new Float32Array(buf, off, n) : new Float64Array(buf, off, n);
      for (let i = 0; i < n; i++) {
        const reason = floatProblem(datatype, values[i]);
        if (reason) return { index: i, reason };
        arr[i] = values[i] as number;
      }
      return undefined;
    }
    case 'FP16': {
      const arr = new Uint16Array(buf, off, n);
      for (let i = 0; i < n; i++) {
        const reason = floatProblem(datatype, values[i]);
        if (reason) return { index: i, reason };
        arr[i] = toFloat16Bits(values[i] as number);
      }
      return undefined;
    }
    case 'BOOL': {
      for (let i = 0; i < n; i++) {
        const v = values[i];
        if (v === true || v === 1) bytes[i] = 1;
        else if (v === false || v === 0) bytes[i] = 0;
        else return { index: i, reason: 'is not a valid BOOL (true, false, 0 or 1)' };
      }
      return undefined;
    }
    case 'INT64':
    case 'UINT64': {
      const arr = datatype === 'UINT64' ? new BigUint64Array(buf, off, n) : new BigInt64Array(buf, off, n);
      for (let i = 0; i < n; i++) {
        const b = toBigInt(values[i], datatype);
        if (typeof b === 'string') return { index: i, reason: b };
        arr[i] = b;
      }
      return undefined;
    }
    default: {
      const Ctor = { UINT8: Uint8Array, UINT16: Uint16Array, UINT32: Uint32Array, INT8: Int8Array, INT16: Int16Array, INT32: Int32Array }[datatype];
      const [lo, hi] = INT_RANGES[datatype]!;
      const arr = new Ctor(buf as ArrayBuffer, off, n);
      for (let i = 0; i < n; i++) {
        const reason = integerProblem(datatype, values[i], lo, hi);
        if (reason) return { index: i, reason };
        arr[i] = values[i] as number;
      }
      return undefined;
    }
  }
}

/** Where the `index`-th leaf (row-major) of nested data sits: its index in each array down to it. */
export function elementPath(data: unknown[], index: number): number[] {
  let seen = 0;
  const path: number[] = [];
  const walk = (arr: unknown[]): boolean => {
    for (let i = 0; i < arr.length; i++) {
      path.push(i);
      const v = arr[i];
      if (Array.isArray(v) ? walk(v) : seen++ === index) return true;
      path.pop();
    }
    return false;
  };
  return walk(data) ? path : [index];
}

/**
 * Decodes wire tensor data (a flat or nested JSON array in row-major order, or
 * base64 of the little-endian bytes) to bytes, checking it against the shape.
 */
export function decodeTensorData(datatype: DataType, shape: readonly number[], data: unknown): CodecResult<Uint8Array> {
  const count = elementCount(shape);
  if (count === undefined) return fail('INPUT_SHAPE_MISMATCH', `shape [${shape.join(',')}] is not a list of non-negative integers with a safe product`);
  if (datatype === 'BYTES') return decodeBytesData(shape, count, data);
  const byteLength = count * DataTypes[datatype].bytes;
  if (typeof data === 'string') {
    const bytes = decodeBase64(data);
    if (!bytes) return fail('INPUT_DATA_INVALID', 'data is a string but not valid base64');
    if (bytes.byteLength !== byteLength)
      return fail('INPUT_DATA_INVALID', `base64 data has ${bytes.byteLength} bytes; ${datatype} of shape [${shape.join(',')}] needs ${byteLength}`);
    const bool = datatype === 'BOOL' ? invalidBoolElement(bytes) : undefined;
    if (bool !== undefined) return fail('INPUT_DATA_INVALID', `base64 data: ${invalidBoolDetail(bytes, bool)}`, [bool]);
    // Copy into an aligned buffer of its own so typed-array views over it are valid.
    return { ok: true, value: bytes.byteOffset % 8 === 0 ? bytes : new Uint8Array(bytes) };
  }
  if (!Array.isArray(data)) return fail('INPUT_DATA_INVALID', 'data must be an array or a base64 string');
  const values = flatten(data, count);
  if (!values || values.length !== count) return fail('INPUT_DATA_INVALID', `data does not hold exactly ${count} elements for shape [${shape.join(',')}]`);
  const bytes = new Uint8Array(byteLength);
  const bad = fillFromJson(datatype, values, bytes);
  if (bad) return badElement(data, values, bad);
  return { ok: true, value: bytes };
}

function badElement(data: unknown[], values: unknown[], bad: BadElement): CodecFailure {
  const v = values[bad.index];
  // JSON.stringify writes Infinity as null: numbers are shown as JavaScript reads them.
  const shown = (typeof v === 'number' ? String(v) : (JSON.stringify(v) ?? String(v))).slice(0, 40);
  return fail('INPUT_DATA_INVALID', `element ${bad.index} (value ${shown}) ${bad.reason}`, elementPath(data, bad.index));
}

/**
 * BYTES data: JSON strings (as Triton and KServe take them; written as UTF-8),
 * or base64 of the framed form (4-byte little-endian length, then the bytes,
 * per element), which must hold exactly the shape's elements, each UTF-8.
 */
function decodeBytesData(shape: readonly number[], count: number, data: unknown): CodecResult<Uint8Array> {
  if (typeof data === 'string') {
    const bytes = decodeBase64(data);
    if (!bytes) return fail('INPUT_DATA_INVALID', 'data is a string but not valid base64');
    const problem = bytesTensorProblem(bytes, count);
    if (problem)
      return fail(
        'INPUT_DATA_INVALID',
        `base64 BYTES data of shape [${shape.join(',')}]: ${problem.detail}`,
        problem.element === undefined ? undefined : [problem.element],
      );
    return { ok: true, value: bytes };
  }
  if (!Array.isArray(data)) return fail('INPUT_DATA_INVALID', 'data must be an array of strings or a base64 string');
  const values = flatten(data, count);
  if (!values || values.length !== count) return fail('INPUT_DATA_INVALID', `data does not hold exactly ${count} elements for shape [${shape.join(',')}]`);
  const index = values.findIndex((v) => typeof v !== 'string');
  if (index >= 0) return badElement(data, values, { index, reason: 'is not a valid BYTES element (a string)' });
  return { ok: true, value: encodeBytesElements(values as string[]) };
}

/** Turns little-endian tensor bytes back into JSON values (INT64 beyond 2^53 become strings; BYTES elements, strings). */
export function encodeTensorJson(datatype: DataType, bytes: Uint8Array): JsonScalar[] {
  if (datatype === 'BYTES') return decodeBytesStrings(bytes);
  const aligned = bytes.byteOffset % 8 === 0 ? bytes : new Uint8Array(bytes);
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
