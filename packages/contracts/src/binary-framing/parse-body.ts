import { framingFailure, type FramingResult } from './framing-result.ts';
import { INFERENCE_HEADER_CONTENT_LENGTH, splitBinaryBody, type ParseJson } from './split-body.ts';
import { sliceBinaryTensors } from './tensor-slices.ts';

/**
 * A framed body: the JSON header, and for each of its tensors (aligned with
 * `header.inputs` or `header.outputs`) the bytes of its binary slice, or
 * undefined when the tensor has JSON `data`. Fixed-size slices are the
 * little-endian bytes; BYTES slices keep their length prefixes
 * (`decodeBytesElements` reads them).
 */
export interface FramedTensors {
  header: Record<string, unknown>;
  tensors: (Uint8Array | undefined)[];
}
/** Triton's raw binary request: no JSON header, the body is one input's bytes (the server deduces the rest from the model). */
export interface RawBinaryBody {
  header: null;
  raw: Uint8Array;
}

function parseFramedBody(
  body: Uint8Array,
  headerLength: number | undefined,
  member: 'inputs' | 'outputs',
  parseJson?: ParseJson,
): FramingResult<FramedTensors | RawBinaryBody> {
  const split = splitBinaryBody(body, headerLength, parseJson);
  if (!split.ok) return split;
  const { header, binary } = split.value;
  if (header === null) return { ok: true, value: { header: null, raw: binary } };
  const tensors = sliceBinaryTensors(header[member], binary, member);
  return tensors.ok ? { ok: true, value: { header, tensors: tensors.value } } : tensors;
}

/** Parses an inference request body given its `Inference-Header-Content-Length` (undefined: the body is all JSON). */
export const parseInferRequestBody = (body: Uint8Array, headerLength: number | undefined, parseJson?: ParseJson) =>
  parseFramedBody(body, headerLength, 'inputs', parseJson);

/** Parses an inference response body (the SDK's side). A response always has a JSON header. */
export function parseInferResponseBody(body: Uint8Array, headerLength: number | undefined, parseJson?: ParseJson): FramingResult<FramedTensors> {
  const parsed = parseFramedBody(body, headerLength, 'outputs', parseJson);
  if (!parsed.ok || parsed.value.header !== null) return parsed as FramingResult<FramedTensors>;
  return framingFailure('BINARY_HEADER_LENGTH_INVALID', `/headers/${INFERENCE_HEADER_CONTENT_LENGTH}`, 'a response has a JSON header: its length cannot be 0');
}
