import { SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { contextFrom, traceCarrier, traceIds, tracer } from '@inferq/core';

/** Probes and scrapes would fill the traces with noise. */
const UNTRACED = new Set(['/healthz', '/readyz', '/metrics', '/v2/health/live', '/v2/health/ready']);
const spans = new WeakMap<FastifyRequest, Span>();

/**
 * A SERVER span per request, named by route template, child of the caller's
 * W3C `traceparent` when it sends one; the request's log lines carry its ids.
 * The context is handed on explicitly (traceContextOf → the job's payload →
 * the worker's spans), never made active: see packages/core/src/tracing.ts.
 * Written here rather than with @fastify/otel, which runs each request inside
 * an active context: with no trace sampled it still cut the submit rate by a
 * fifth on this box (7,200 → 5,500 req/s).
 */
export function registerTracing(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const route = request.routeOptions.url;
    if (route !== undefined && UNTRACED.has(route)) return;
    const span = tracer().startSpan(
      `${request.method} ${route ?? 'unmatched'}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': request.method,
          'http.route': route ?? 'unmatched',
          'url.path': request.url.split('?')[0],
          'inferq.request.id': request.id,
        },
      },
      contextFrom(request.headers),
    );
    spans.set(request, span);
    const ids = traceIds(span);
    if (ids.trace_id) request.log = request.log.child(ids);
  });
  app.addHook('onError', async (request, _reply, error) => {
    spans.get(request)?.recordException(error);
  });
  app.addHook('onResponse', async (request, reply) => {
    const span = spans.get(request);
    if (!span) return;
    span.setAttribute('http.response.status_code', reply.statusCode);
    if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
}

/** The request's trace context, to store with the jobs it submits; undefined when not tracing. */
export function traceContextOf(request: FastifyRequest): Record<string, string> | undefined {
  const span = spans.get(request);
  return span ? traceCarrier(span) : undefined;
}
