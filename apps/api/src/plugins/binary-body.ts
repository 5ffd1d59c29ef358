// Bodies in the Open Inference Protocol's binary tensor data extension: a JSON
// header of Inference-Header-Content-Length bytes, then the tensors' bytes.
// Registered on a route scope (never globally), it reads such bodies into one
// buffer after checking the lengths the headers claim, before reading anything.
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { INFERENCE_HEADER_CONTENT_LENGTH, parseHeaderLength, splitBinaryBody, type SplitBody } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import { framingError } from '../services/jobs/intake/submit-body.ts';

export interface BinaryBodyOptions {
  /**
   * The most bytes the JSON header may have; the body limit when unset. A mixed
   * request's JSON `data` counts, and the C++ client sends all-JSON requests with
   * the header length set to the whole body, so a cap below the JSON body limit
   * refuses requests that are accepted without the header.
   */
  headerLimitBytes?: number;
  /** The most bytes a body may have; the route's `bodyLimit` (else the server's) when unset or larger. */
  bodyLimitBytes?: number;
}

/** The split body of a binary-framed request: `request.body` is its `header`, and this adds the binary section. */
export type BinaryBody = SplitBody & { header: Record<string, unknown> };

const binaryBodies = new WeakMap<FastifyRequest, BinaryBody>();

/** The binary section of a request read by this parser; undefined for a plain JSON body (no Inference-Header-Content-Length). */
export const binaryBodyOf = (request: FastifyRequest): BinaryBody | undefined => binaryBodies.get(request);

const headerValue = (request: FastifyRequest, name: string): string | undefined => {
  const v = request.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
};

/** The checks made on the headers alone: what the body may be, before a byte of it is read. */
function checkClaims(
  request: FastifyRequest,
  options: BinaryBodyOptions,
  framed: boolean,
): { limitBytes: number; contentBytes: number | undefined; headerBytes: number | undefined } {
  const encoding = headerValue(request, 'content-encoding')?.trim().toLowerCase();
  // The header length counts decoded bytes; inferq does not decode bodies (a plain JSON body is left as today).
  if (framed && encoding && encoding !== 'identity') throw new AppError('UNSUPPORTED_MEDIA_TYPE', `Content-Encoding ${encoding.slice(0, 40)} is not accepted`);
  const limitBytes = Math.min(options.bodyLimitBytes ?? Infinity, request.routeOptions.bodyLimit);
  // Node has checked Content-Length is digits, and refused it beside Transfer-Encoding; without either the body is empty.
  const length = headerValue(request, 'content-length');
  const chunked = /chunked\s*$/i.test(headerValue(request, 'transfer-encoding') ?? '');
  const contentBytes = length !== undefined ? Number(length) : chunked ? undefined : 0;
  if (contentBytes !== undefined && contentBytes > limitBytes)
    throw new AppError('PAYLOAD_TOO_LARGE', `Content-Length ${contentBytes} is over the ${limitBytes}-byte limit`);
  const claimed = parseHeaderLength(headerValue(request, INFERENCE_HEADER_CONTENT_LENGTH), contentBytes ?? Infinity);
  if (!claimed.ok) throw framingError(claimed);
  const headerLimitBytes = Math.min(options.headerLimitBytes ?? Infinity, limitBytes);
  if (claimed.value !== undefined && claimed.value > headerLimitBytes)
    throw new AppError('PAYLOAD_TOO_LARGE', `Inference-Header-Content-Length ${claimed.value} is over the ${headerLimitBytes}-byte JSON header limit`);
  if (claimed.value === 0)
    throw framingError({
      ok: false,
      code: 'BINARY_HEADER_LENGTH_INVALID',
      pointer: `/headers/${INFERENCE_HEADER_CONTENT_LENGTH}`,
      detail: 'a raw binary request (header length 0) is not served: send the JSON header',
    });
  return { limitBytes, contentBytes, headerBytes: claimed.value };
}

/**
 * Reads the body up to the limit: as one buffer of its own (a copy: the chunks are views of the socket's reads), or
 * as UTF-8 text (a plain JSON body, decoded straight from a lone chunk).
 */
function readBody(payload: NodeJS.ReadableStream, limitBytes: number, contentBytes: number | undefined, as: 'bytes'): Promise<Uint8Array>;
function readBody(payload: NodeJS.ReadableStream, limitBytes: number, contentBytes: number | undefined, as: 'text'): Promise<string>;
function readBody(payload: NodeJS.ReadableStream, limitBytes: number, contentBytes: number | undefined, as: 'bytes' | 'text'): Promise<Uint8Array | string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (err?: Error, body?: Uint8Array | string) => {
      payload.removeListener('data', onData);
      payload.removeListener('end', onEnd);
      payload.removeListener('error', onError);
      if (err) reject(err);
      else resolve(body!);
    };
    const onData = (chunk: Buffer | string) => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      received += bytes.byteLength;
      if (received > limitBytes) return finish(new AppError('PAYLOAD_TOO_LARGE', `the body is over the ${limitBytes}-byte limit`));
      chunks.push(bytes);
    };
    const onEnd = () => {
      if (contentBytes !== undefined && received !== contentBytes)
        return finish(new AppError('MALFORMED_BODY', `the body has ${received} bytes; Content-Length says ${contentBytes}`));
      if (as === 'bytes') return finish(undefined, Buffer.concat(chunks, received));
      finish(undefined, chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, received).toString('utf8'));
    };
    const onError = (err: Error) => finish(err);
    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', onError);
    payload.resume();
  });
}

/**
 * Adds the binary extension's body parsers to a route scope (call it inside the
 * route plugin, before its routes): `application/octet-stream`, no content type
 * (tritonclient's Python client sends none), and `application/json` with an
 * Inference-Header-Content-Length header (the C++ client's all-JSON requests).
 * A framed body becomes `request.body` = its JSON header (the route's schema
 * validates it as before) and `binaryBodyOf(request)` = header and binary
 * section. A JSON body without the header goes through Fastify's JSON parser as
 * today; other content types stay 415.
 */
export function registerBinaryBody(scope: FastifyInstance, options: BinaryBodyOptions = {}): void {
  const defaultJson = scope.getDefaultJsonParser('error', 'error');
  const parseJson = (request: FastifyRequest) => (text: string) => {
    let result: { err: Error | null; value?: unknown } = { err: null };
    // Fastify's own JSON parser answers through the callback, at once; its type also allows a promise, which it never returns.
    void defaultJson(request, text, (err, value) => (result = { err, value }));
    if (result.err) throw result.err;
    return result.value;
  };

  async function parseFramed(request: FastifyRequest, payload: NodeJS.ReadableStream): Promise<unknown> {
    const { limitBytes, contentBytes, headerBytes } = checkClaims(request, options, true);
    const body = await readBody(payload, limitBytes, contentBytes, 'bytes');
    const split = splitBinaryBody(body, headerBytes, parseJson(request));
    if (!split.ok) throw framingError(split);
    if (split.value.header === null) throw new AppError('INTERNAL', 'a raw binary body got past the checks');
    binaryBodies.set(request, split.value as BinaryBody);
    return split.value.header;
  }

  scope.addContentTypeParser('application/octet-stream', (request: FastifyRequest, payload: IncomingMessage) => parseFramed(request, payload));
  scope.addContentTypeParser('application/json', (request: FastifyRequest, payload: IncomingMessage, done: (err: Error | null, body?: unknown) => void) => {
    if (headerValue(request, INFERENCE_HEADER_CONTENT_LENGTH) !== undefined) return void parseFramed(request, payload).then((body) => done(null, body), done);
    // Every JSON submit comes this way: Fastify's JSON parser on the text, no promise of our own around it.
    const { limitBytes, contentBytes } = checkClaims(request, options, false);
    readBody(payload, limitBytes, contentBytes, 'text').then((text) => defaultJson(request, text, done), done);
  });
  // No content type (Node gives none), or one no other parser of the scope reads: framed only with the length header.
  scope.addContentTypeParser('*', async (request: FastifyRequest, payload: IncomingMessage) => {
    if (request.headers['content-type'] === undefined || headerValue(request, INFERENCE_HEADER_CONTENT_LENGTH) !== undefined)
      return parseFramed(request, payload);
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', `content type ${String(request.headers['content-type']).slice(0, 60)} is not read here`);
  });
}
