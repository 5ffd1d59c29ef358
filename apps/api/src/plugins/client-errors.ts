// Errors Node's HTTP parser finds before Fastify has a request (headers too
// large, a garbage request line, a bad Transfer-Encoding, a request that is not
// received in time) are answered here, on the raw socket, with the same
// problem+json body every route error has. Fastify's `clientErrorHandler`.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCatalogue, type ErrorCode } from '@inferq/contracts';
import { problemBody, sendProblem } from './error-handler.ts';

/** How long a refused connection may stay half-open for the client to read the reply and close. */
const LINGER_MS = 5_000;

/** Node attaches the bytes it could not parse as `rawPacket` (a Buffer; Fastify's types say otherwise). */
type ClientError = Error & { code?: string; rawPacket?: unknown };

/** The transfer codings a request's raw bytes name, lower-cased (empty when none can be read). */
function transferCodings(raw: unknown): string[] {
  if (!Buffer.isBuffer(raw)) return [];
  const match = raw
    .toString('latin1')
    .slice(0, 64 * 1024)
    .match(/^transfer-encoding:[ \t]*([^\r\n]*)/im);
  return match ? match[1]!.split(',').map((c) => c.trim().toLowerCase()) : [];
}

/** RFC 9112: a coding other than chunked is 501, one the parser cannot frame (chunked not last) is 400. */
const unsupportedCodings = (codings: readonly string[]): string[] => codings.filter((c) => c !== '' && c !== 'chunked');

/** The catalogue code and detail for a parser or timeout error. */
function classifyClientError(err: ClientError): { code: ErrorCode; detail: string } {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { code: 'HEADERS_TOO_LARGE', detail: 'the request line and headers exceed the size limit' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { code: 'REQUEST_TIMEOUT', detail: 'the request was not received in time' };
    case 'HPE_INVALID_TRANSFER_ENCODING': {
      const unsupported = unsupportedCodings(transferCodings(err.rawPacket));
      if (unsupported.length > 0)
        return { code: 'TRANSFER_ENCODING_UNSUPPORTED', detail: `transfer coding "${unsupported[0]!.slice(0, 40)}" is not implemented; only chunked is` };
      return { code: 'MALFORMED_REQUEST', detail: 'Transfer-Encoding must end with chunked' };
    }
    default:
      return { code: 'MALFORMED_REQUEST', detail: `the request could not be parsed (${(err.code ?? 'error').slice(0, 40)})` };
  }
}

/** A complete HTTP/1.1 problem+json response that closes the connection. */
function rawProblemResponse(code: ErrorCode, detail: string, instance: string): string {
  const { status } = ErrorCatalogue[code];
  const body = JSON.stringify(problemBody(code, detail, instance));
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
    `Content-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/** Fastify's `clientErrorHandler`: answers on the socket, then lets the client close it (or closes it after LINGER_MS). */
export function createClientErrorHandler(log: { debug(obj: object, msg: string): void }) {
  return (err: ClientError, socket: Socket): void => {
    // A reset connection has no one to answer.
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const { code, detail } = classifyClientError(err);
    const instance = randomUUID();
    log.debug({ code, parserError: err.code, instance }, 'request refused before routing');
    // A response already under way cannot get a second status line.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (!socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    // end(), not destroy(): closing with unread request bytes would reset the connection before the client reads the reply.
    socket.end(rawProblemResponse(code, detail, instance));
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  };
}

/**
 * A request whose Transfer-Encoding names a coding other than chunked (Node
 * passes `gzip, chunked` through) is refused with 501 before its body is read.
 */
export function registerTransferEncodingCheck(app: FastifyInstance): void {
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers['transfer-encoding'];
    if (header === undefined) return;
    const unsupported = unsupportedCodings(
      String(header)
        .split(',')
        .map((c) => c.trim().toLowerCase()),
    );
    if (unsupported.length === 0) return;
    reply.header('connection', 'close');
    return sendProblem(
      reply,
      request,
      'TRANSFER_ENCODING_UNSUPPORTED',
      `transfer coding "${unsupported[0]!.slice(0, 40)}" is not implemented; only chunked is`,
    );
  });
}
