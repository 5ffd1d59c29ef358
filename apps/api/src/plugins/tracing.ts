import { FastifyOtelInstrumentation } from '@fastify/otel';
import type { FastifyInstance } from 'fastify';

/** Probes and scrapes would fill the traces with noise. */
const UNTRACED = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * A span per request (W3C `traceparent` honoured), named by route template,
 * with a child span for the handler. Job submissions carry the request's
 * context into the queue (job-intake), where the worker's spans pick it up.
 * A span for every hook as well (auth, rate limit, …) halved the submit rate
 * when measured, for little a reader needs; they stay off.
 */
export async function registerTracing(app: FastifyInstance): Promise<void> {
  const instrumentation = new FastifyOtelInstrumentation({
    registerOnInitialization: false,
    instrumentHooks: false,
    ignorePaths: ({ url }) => UNTRACED.has(url),
    requestHook: (span, request) => span.updateName(`${request.method} ${request.routeOptions.url ?? 'unmatched'}`),
  });
  await app.register(instrumentation.plugin());
}
