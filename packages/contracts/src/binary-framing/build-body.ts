import { isDataType } from '../datatypes.ts';
import { decodeTensorData, elementCount, encodeTensorJson, type JsonScalar } from '../tensor-codec.ts';
import { decodeBytesElements, encodeBytesElements } from './bytes-elements.ts';
import { framingFailure, type FramingResult } from './framing-result.ts';
import { BYTES_DATATYPE, sliceBinaryTensors } from './tensor-slices.ts';

/** A body ready to send: `headerLength` goes in `Inference-Header-Content-Length` (undefined: all JSON, no binary section). */
export interface FramedBody {
  body: Uint8Array;
  headerLength: number | undefined;
  contentType: 'application/octet-stream' | 'application/json';
}

/** A tensor as bytes: little-endian elements, or for BYTES the length-prefixed elements (`encodeBytesElements`). */
export interface BinaryTensor {
  name: string;
  datatype: string;
  shape: number[];
  bytes: Uint8Array;
}

const utf8 = new TextEncoder();
const utf8Text = new TextDecoder('utf-8', { fatal: true });

/** The JSON header (compact, keys in the order given) followed by the binary sections, in order. */
function frameBody(header: object, sections: readonly Uint8Array[]): FramedBody {
  const json = utf8.encode(JSON.stringify(header));
  if (sections.length === 0) return { body: json, headerLength: undefined, contentType: 'application/json' };
  const body = new Uint8Array(json.byteLength + sections.reduce((n, s) => n + s.byteLength, 0));
  body.set(json, 0);
  let offset = json.byteLength;
  for (const s of sections) {
    body.set(s, offset);
    offset += s.byteLength;
  }
  return { body, headerLength: json.byteLength, contentType: 'application/octet-stream' };
}

/** A tensor's bytes as JSON `data` (flat, row-major), or undefined when JSON cannot carry them (BYTES that are not UTF-8, an unknown datatype). */
function jsonDataOf(t: BinaryTensor): JsonScalar[] | undefined {
  if (t.datatype !== BYTES_DATATYPE) return isDataType(t.datatype) ? encodeTensorJson(t.datatype, t.bytes) : undefined;
  const elements = decodeBytesElements(t.bytes, elementCount(t.shape) ?? -1);
  if (!elements.ok) return undefined;
  try {
    return elements.value.map((e) => utf8Text.decode(e));
  } catch {
    return undefined;
  }
}

export interface InferResponseHead {
  model_name: string;
  model_version?: string;
  id?: string;
  parameters?: Record<string, unknown>;
}

/**
 * Builds a response body: each output as binary data when `isBinary(name)`
 * (`binaryOutputChoice` of the request) or when JSON cannot carry it, else as
 * JSON `data`. Keys are in Triton's order. All JSON: `headerLength` is undefined
 * and the content type application/json, as Triton answers.
 */
export function encodeInferResponse(response: InferResponseHead & { outputs: readonly BinaryTensor[] }, isBinary: (name: string) => boolean): FramedBody {
  const { outputs, ...head } = response;
  const sections: Uint8Array[] = [];
  const jsonOutputs = outputs.map((t) => {
    const data = isBinary(t.name) ? undefined : jsonDataOf(t);
    if (data) return { name: t.name, datatype: t.datatype, shape: t.shape, data };
    sections.push(t.bytes);
    return { name: t.name, datatype: t.datatype, shape: t.shape, parameters: { binary_data_size: t.bytes.byteLength } };
  });
  return frameBody({ ...head, outputs: jsonOutputs }, sections);
}

/** A request input: bytes (`BinaryTensor.bytes` layout) or JSON values (flat or nested; BYTES as strings). */
export interface RequestInput {
  name: string;
  datatype: string;
  shape: number[];
  data: Uint8Array | readonly unknown[];
  /** true: send as binary data; false: as JSON; unset: bytes go binary, JSON values go JSON unless over `binaryThresholdBytes`. */
  binary?: boolean;
}
export interface RequestedOutput {
  name: string;
  /** Ask for this output as binary data; unset: `binaryOutputs`. */
  binary?: boolean;
}
export interface EncodeRequestOptions {
  /** JSON values whose binary form reaches this many bytes are sent as binary (unset: only when asked). */
  binaryThresholdBytes?: number;
  /** Ask for outputs as binary data (default true, as tritonclient does). */
  binaryOutputs?: boolean;
}

/** An input's binary form, from bytes or from JSON values. */
function inputBytes(input: RequestInput, at: string): FramingResult<Uint8Array> {
  if (input.data instanceof Uint8Array) return { ok: true, value: input.data };
  if (input.datatype === BYTES_DATATYPE) {
    const flat = (input.data as unknown[]).flat(64);
    if (!flat.every((e) => typeof e === 'string')) return framingFailure('INPUT_DATA_INVALID', `${at}/data`, 'BYTES data must be strings');
    return { ok: true, value: encodeBytesElements(flat as string[]) };
  }
  if (!isDataType(input.datatype)) return framingFailure('DATATYPE_UNSUPPORTED', `${at}/datatype`, `datatype ${input.datatype.slice(0, 40)} is not supported`);
  const decoded = decodeTensorData(input.datatype, input.shape, input.data);
  return decoded.ok ? decoded : framingFailure(decoded.code, `${at}/data`, decoded.detail);
}

/**
 * Builds a request body the way tritonclient does (same keys, same order,
 * compact JSON): inputs sent as binary carry `parameters.binary_data_size` and
 * follow the JSON header in order; listed outputs carry `parameters.binary_data`,
 * and with none listed `parameters.binary_data_output` asks for all of them.
 * The result is parsed back before it is returned, so a frame the server would
 * refuse (a size that disagrees with the shape) fails here.
 */
export function encodeInferRequest(
  request: { id?: string; parameters?: Record<string, unknown>; inputs: readonly RequestInput[]; outputs?: readonly RequestedOutput[] },
  options: EncodeRequestOptions = {},
): FramingResult<FramedBody> {
  const binaryOutputs = options.binaryOutputs ?? true;
  const sections: Uint8Array[] = [];
  const inputs: object[] = [];
  for (const [i, input] of request.inputs.entries()) {
    const { name, shape, datatype } = input;
    const isBytes = input.data instanceof Uint8Array;
    let binary = input.binary ?? isBytes;
    const bytes = binary || !isBytes || options.binaryThresholdBytes !== undefined ? inputBytes(input, `/body/inputs/${i}`) : undefined;
    if (bytes && !bytes.ok) return bytes;
    if (input.binary === undefined && !isBytes && options.binaryThresholdBytes !== undefined && bytes!.value.byteLength >= options.binaryThresholdBytes)
      binary = true;
    if (binary) {
      sections.push(bytes!.value);
      inputs.push({ name, shape, datatype, parameters: { binary_data_size: bytes!.value.byteLength } });
      continue;
    }
    const data = isBytes ? jsonDataOf({ name, datatype, shape, bytes: input.data as Uint8Array }) : input.data;
    if (!data) return framingFailure('INPUT_DATA_INVALID', `/body/inputs/${i}/data`, `input ${name} cannot be sent as JSON: send it as binary`);
    inputs.push({ name, shape, datatype, data });
  }
  const outputs = request.outputs?.map((o) => ({ name: o.name, parameters: { binary_data: o.binary ?? binaryOutputs } }));
  const parameters = outputs ? request.parameters : { ...request.parameters, binary_data_output: binaryOutputs };
  const header = {
    ...(request.id !== undefined && { id: request.id }),
    inputs,
    ...(outputs && { outputs }),
    ...(parameters && Object.keys(parameters).length > 0 && { parameters }),
  };
  const framed = frameBody(header, sections);
  const check = sliceBinaryTensors(inputs, framed.body.subarray(framed.headerLength ?? framed.body.byteLength), 'inputs');
  return check.ok ? { ok: true, value: framed } : check;
}
