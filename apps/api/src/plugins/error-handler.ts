import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifySchemaValidationError } from 'fastify';
import { ErrorCatalogue, type ErrorCode } from '@inferq/contracts';
import { AppError, isAppError, type ProblemItem } from '@inferq/core';
import { isDatabaseUnavailable } from '@inferq/db';
import { isStorageUnavailable } from '@inferq/storage';

// Fastify's own client errors, mapped to catalogue codes.
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'MALFORMED_BODY',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'MALFORMED_BODY',
  FST_ERR_CTP_INVALID_JSON_BODY: 'MALFORMED_BODY',
  FST_INVALID_MULTIPART_CONTENT_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_REQ_FILE_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_FILES_LIMIT: 'VALIDATION_FAILED',
  FST_FIELDS_LIMIT: 'VALIDATION_FAILED',
  FST_PARTS_LIMIT: 'VALIDATION_FAILED',
  FST_ERR_BAD_URL: 'MALFORMED_REQUEST',
};

/** The RFC 9457 body for a catalogue code: what every error reply carries, from a route or straight from the socket. */
export function problemBody(
  code: ErrorCode,
  detail: string | undefined,
  instance: string | undefined,
  errors?: ProblemItem[],
  extensions?: Record<string, unknown>,
) {
  const { status, title } = ErrorCatalogue[code];
  return { ...extensions, type: `https://inferq.dev/problems/${code.toLowerCase().replaceAll('_', '-')}`, title, status, code, detail, instance, errors };
}

export function sendProblem(
  reply: FastifyReply,
  request: FastifyRequest,
  code: ErrorCode,
  detail?: string,
  errors?: ProblemItem[],
  extensions?: Record<string, unknown>,
) {
  return reply
    .status(ErrorCatalogue[code].status)
    .type('application/problem+json')
    .send(problemBody(code, detail, request.id, errors, extensions));
}

/** The property a `required` or `additionalProperties` error is about, as a pointer segment. */
function offendingProperty(v: FastifySchemaValidationError): string {
  const params = v.params as { missingProperty?: string; additionalProperty?: string };
  if (v.keyword === 'required') return `/${params.missingProperty}`;
  if (v.keyword === 'additionalProperties') return `/${params.additionalProperty}`;
  return '';
}

/** Ajv's errors for one part of the request (`body`, `querystring`, …) as VALIDATION_FAILED, with a JSON pointer per error. */
export function validationError(validation: readonly FastifySchemaValidationError[], part: string): AppError {
  const errors = validation.map((v) => ({
    pointer: `/${part}${v.instancePath}${offendingProperty(v)}`,
    code: 'VALIDATION_FAILED',
    detail: v.message ?? 'invalid',
  }));
  return new AppError(
    'VALIDATION_FAILED',
    errors
      .map((e) => `${e.pointer} ${e.detail}`)
      .join('; ')
      .slice(0, 500),
    { errors },
  );
}

function toAppError(err: FastifyError): AppError {
  if (isAppError(err)) return err;
  if (err.validation) return validationError(err.validation, err.validationContext ?? 'body');
  const mapped = err.code ? FASTIFY_CODES[err.code] : undefined;
  if (mapped) return new AppError(mapped, err.message);
  if (err instanceof SyntaxError || err.statusCode === 400) return new AppError('MALFORMED_BODY', err.message);
  if (isStorageUnavailable(err))
    return new AppError('STORAGE_UNAVAILABLE', 'object storage cannot be reached; retry shortly', { headers: { 'retry-after': '2' } });
  if (isDatabaseUnavailable(err))
    return new AppError('DATABASE_UNAVAILABLE', 'the database cannot be reached; retry shortly', { headers: { 'retry-after': '2' } });
  if (err.statusCode === 413) return new AppError('PAYLOAD_TOO_LARGE', err.message);
  if (err.statusCode === 415) return new AppError('UNSUPPORTED_MEDIA_TYPE', err.message);
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) return new AppError('VALIDATION_FAILED', err.message);
  return new AppError('INTERNAL', undefined, { cause: err });
}

/**
 * The one place errors become replies: RFC 9457 problem+json with a stable code.
 * Also Fastify's `frameworkErrors` option, which answers a URL it cannot decode
 * or a path parameter over `maxParamLength` before any route or hook runs.
 */
export function replyWithProblem(err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const appError = toAppError(err);
  // A dependency being down is expected and already said once by its connection: no stack per request.
  if (appError.code === 'INTERNAL') request.log.error({ err, code: appError.code }, 'request failed');
  // Redis's outage is told once by its watch (redis-outage.ts), not once per refused submit.
  else if (appError.status >= 500 && appError.code !== 'QUEUE_UNAVAILABLE')
    request.log.warn({ code: appError.code, detail: appError.message }, 'request refused');
  else request.log.debug({ code: appError.code, detail: appError.message }, 'request rejected');
  for (const [k, v] of Object.entries(appError.headers ?? {})) reply.header(k, v);
  const detail = appError.code === 'INTERNAL' ? undefined : appError.message;
  return sendProblem(reply, request, appError.code, detail, appError.errors, appError.extensions);
}

export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler(replyWithProblem);
  app.setNotFoundHandler((request, reply) => sendProblem(reply, request, 'NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`));
}

/**
 * Adds a protocol's own error member to every problem the routes of this
 * plugin scope answer with (KServe v2's `error` string, OpenAI's `error`
 * object), so those clients and RFC 9457 clients both read it.
 */
export function addProblemMember(app: FastifyInstance, member: (problem: { code: string; message: string }, statusCode: number) => unknown): void {
  app.addHook('preSerialization', async (_request, reply, payload) => {
    const problem = payload as { code?: unknown; detail?: string; title?: string } | null;
    if (reply.statusCode < 400 || !problem || typeof problem !== 'object' || typeof problem.code !== 'string') return payload;
    return { ...problem, error: member({ code: problem.code, message: problem.detail ?? problem.title ?? problem.code }, reply.statusCode) };
  });
}
