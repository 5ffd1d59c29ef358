import {
  byteLengthOf,
  DataTypes,
  decodeBase64,
  decodeTensorData,
  elementCount,
  encodeTensorBase64,
  INFERENCE_HEADER_CONTENT_LENGTH,
  isDataType,
  isFixedSizeDataType,
  type FixedSizeDataType,
  type InputTensor,
  type SubmitJobBody,
} from '@inferq/contracts';
import { dataTypeOfArray, tensor, type TensorArray } from './tensors.ts';

// How a /v1 submit goes on the wire (docs/api.md, "Binary tensors"): JSON as today; the framed body (a JSON header whose
// binary inputs carry parameters.binary_data_size, then their bytes in input order) once an input reaches the binary
// threshold; and an upload reference for an input past the upload threshold, its bytes PUT beforehand.

/** An input given as a typed array. A Uint8Array of `shape`'s element count × the datatype's size is the raw little-endian bytes. */
export interface ArrayInput {
  name: string;
  shape: readonly number[];
  data: TensorArray;
  /** The array's own datatype by default; another one converts the values (FP16 from a Float32Array) unless `data` is raw bytes. */
  datatype?: FixedSizeDataType;
}
/** An input whose bytes were uploaded already (`client.uploads.put`). */
export interface UploadInput {
  name: string;
  datatype: string;
  shape: readonly number[];
  upload: string;
}
/** An input as the contract's submit body has it: JSON `data` (flat or nested values, or base64 of the bytes). */
type JsonInput = SubmitJobBody['inputs'][number];
/** A JSON input (values or base64), a typed array, or an upload reference. */
export type SubmitInput = JsonInput | ArrayInput | UploadInput;
export type SubmitRequest = Omit<SubmitJobBody, 'inputs'> & { inputs: readonly SubmitInput[] };

export interface TransferThresholds {
  /** Inputs of at least this many bytes make the body framed, every input in it binary. 0: always; Infinity: never. */
  binaryThresholdBytes: number;
  /** An input of at least this many bytes is uploaded first (POST /v1/uploads, PUT) and named by its upload id. Infinity: never. */
  uploadThresholdBytes: number;
}
export const DEFAULT_THRESHOLDS: TransferThresholds = { binaryThresholdBytes: 4 * 1024, uploadThresholdBytes: 32 * 1024 * 1024 };

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const isUpload = (input: SubmitInput): input is UploadInput => 'upload' in input && typeof input.upload === 'string';
const isArrayInput = (input: SubmitInput): input is ArrayInput => 'data' in input && ArrayBuffer.isView(input.data);

/** An input as the planner sees it: its wire header, its size, and its bytes on demand (undefined when they cannot be made). */
interface Sized {
  head: { name: string; datatype: string; shape: number[] };
  size: number | undefined;
  bytes: () => Uint8Array | undefined;
  json: () => JsonInput;
}

function rawBytesOf(input: ArrayInput): Uint8Array | undefined {
  const { data, shape, datatype } = input;
  const count = elementCount(shape);
  if (!(data instanceof Uint8Array) || datatype === undefined || count === undefined) return undefined;
  return data.byteLength === count * DataTypes[datatype].bytes ? data : undefined;
}

function sizeArrayInput(input: ArrayInput): Sized {
  const raw = rawBytesOf(input);
  const datatype = input.datatype ?? dataTypeOfArray(input.data);
  const head = { name: input.name, datatype, shape: [...input.shape] };
  const own = raw === undefined && dataTypeOfArray(input.data) === datatype && LITTLE_ENDIAN;
  const json = (): JsonInput => {
    if (raw) return { ...head, data: encodeTensorBase64(raw) } satisfies InputTensor;
    return tensor(input.name, input.data, input.shape, { datatype });
  };
  const bytes = (): Uint8Array | undefined => {
    if (raw) return raw;
    if (own) return new Uint8Array(input.data.buffer, input.data.byteOffset, input.data.byteLength);
    const converted = json();
    return typeof converted.data === 'string' ? decodeBase64(converted.data) : bytesOfJson(converted);
  };
  return { head, size: byteLengthOf(datatype, input.shape), bytes, json };
}

function bytesOfJson(input: JsonInput): Uint8Array | undefined {
  if (!isDataType(input.datatype)) return undefined;
  const decoded = decodeTensorData(input.datatype, input.shape, input.data);
  return decoded.ok ? decoded.value : undefined;
}

function sizeJsonInput(input: JsonInput): Sized {
  const head = { name: input.name, datatype: input.datatype, shape: input.shape };
  // A BYTES input's size is its strings' (known only once encoded): it stays JSON, as strings.
  const size = isDataType(input.datatype) && isFixedSizeDataType(input.datatype) ? byteLengthOf(input.datatype, input.shape) : undefined;
  return { head, size, bytes: () => bytesOfJson(input), json: () => input };
}

/** One input's part in the request: JSON in the header, binary (header + bytes in the section), or uploaded first. */
export type PlannedInput =
  | { kind: 'json'; input: JsonInput | UploadInput }
  | { kind: 'binary'; head: Sized['head']; bytes: Uint8Array }
  | { kind: 'upload'; head: Sized['head']; bytes: Uint8Array };

/**
 * Which way each input goes. Any input reaching `binaryThresholdBytes` makes the body framed, and then every input
 * whose bytes can be made goes binary (an input the codec refuses stays JSON, so the server's problem names it).
 */
export function planInputs(inputs: readonly SubmitInput[], thresholds: TransferThresholds): PlannedInput[] {
  const sized = inputs.map((input) => (isUpload(input) ? input : isArrayInput(input) ? sizeArrayInput(input) : sizeJsonInput(input as JsonInput)));
  const planned = sized.map((s): PlannedInput | Sized => {
    if (!('head' in s)) return { kind: 'json', input: s };
    if (s.size === undefined || s.size < thresholds.uploadThresholdBytes) return s;
    const bytes = s.bytes();
    return bytes ? { kind: 'upload', head: s.head, bytes } : s;
  });
  const framed = planned.some((p) => 'head' in p && !('kind' in p) && p.size !== undefined && p.size >= thresholds.binaryThresholdBytes);
  return planned.map((p) => {
    if ('kind' in p) return p;
    const bytes = framed ? p.bytes() : undefined;
    return bytes ? { kind: 'binary', head: p.head, bytes } : { kind: 'json', input: p.json() };
  });
}

/** A body ready for fetch: the JSON body, or the framed one with its headers. */
export type WireBody = { json: object } | { framed: Blob; headers: Record<string, string> };

const utf8 = new TextEncoder();

/**
 * The submit body from planned inputs, uploads already replaced by `{ upload: id }` (`uploadIds`, by input index).
 * Framed when any input is binary: `Content-Type: application/octet-stream`, `Inference-Header-Content-Length` the
 * header's UTF-8 length, then the binary inputs' bytes in input order.
 */
export function buildSubmitBody(body: Omit<SubmitRequest, 'inputs'>, planned: readonly PlannedInput[], uploadIds: ReadonlyMap<number, string>): WireBody {
  const sections: Uint8Array[] = [];
  const inputs = planned.map((p, i) => {
    if (p.kind === 'json') return p.input;
    if (p.kind === 'upload') return { ...p.head, upload: uploadIds.get(i) };
    sections.push(p.bytes);
    return { ...p.head, parameters: { binary_data_size: p.bytes.byteLength } };
  });
  const header = { ...body, inputs };
  if (sections.length === 0) return { json: header };
  const json = utf8.encode(JSON.stringify(header));
  return {
    framed: new Blob([json, ...sections] as BlobPart[]),
    headers: { 'content-type': 'application/octet-stream', [INFERENCE_HEADER_CONTENT_LENGTH]: String(json.byteLength) },
  };
}
