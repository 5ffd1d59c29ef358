import { framingFailure, type FramingResult } from './framing-result.ts';

/** The HTTP header that gives the JSON header's length in bytes when a binary section follows it (lower case, as Node reads headers). */
export const INFERENCE_HEADER_CONTENT_LENGTH = 'inference-header-content-length';
const HEADER_POINTER = `/headers/${INFERENCE_HEADER_CONTENT_LENGTH}`;

/** Parses JSON text; the API passes Fastify's (which refuses `__proto__` keys), others the default. */
export type ParseJson = (text: string) => unknown;

/**
 * A body split at the JSON header: the parsed header and the binary section after it.
 * `header` is null for Triton's raw binary request (header length 0: the whole body
 * is one input's bytes).
 */
export interface SplitBody {
  header: Record<string, unknown> | null;
  binary: Uint8Array;
  headerBytes: number;
}

/**
 * Reads `Inference-Header-Content-Length`: undefined when absent (the whole body is
 * JSON), else a non-negative integer no larger than the body.
 */
export function parseHeaderLength(value: string | number | undefined, bodyBytes: number): FramingResult<number | undefined> {
  if (value === undefined) return { ok: true, value: undefined };
  const n = typeof value === 'number' ? value : /^\d{1,16}$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < 0)
    return framingFailure('BINARY_HEADER_LENGTH_INVALID', HEADER_POINTER, `Inference-Header-Content-Length must be a non-negative integer`);
  if (n > bodyBytes)
    return framingFailure('BINARY_HEADER_LENGTH_INVALID', HEADER_POINTER, `Inference-Header-Content-Length ${n} is past the ${bodyBytes}-byte body`);
  return { ok: true, value: n };
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Splits a body at `headerLength` bytes (all of it when undefined) and parses the JSON header, which must be an object. */
export function splitBinaryBody(body: Uint8Array, headerLength: number | undefined, parseJson: ParseJson = JSON.parse): FramingResult<SplitBody> {
  const length = parseHeaderLength(headerLength, body.byteLength);
  if (!length.ok) return length;
  const headerBytes = length.value ?? body.byteLength;
  const binary = body.subarray(headerBytes);
  if (length.value === 0) return { ok: true, value: { header: null, binary, headerBytes } };
  let header: unknown;
  try {
    header = parseJson(utf8.decode(body.subarray(0, headerBytes)));
  } catch (err) {
    const reason = err instanceof Error ? err.message.slice(0, 200) : 'invalid';
    return framingFailure('MALFORMED_BODY', '/body', `the JSON header (${headerBytes} bytes) does not parse: ${reason}`);
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header))
    return framingFailure('MALFORMED_BODY', '/body', 'the JSON header must be an object');
  return { ok: true, value: { header: header as Record<string, unknown>, binary, headerBytes } };
}
