import { FastifyOtelInstrumentation } from '@fastify/otel';
import type { FastifyInstance } from 'fastify';

/** Probes and scrapes would fill the traces with noise. */
const UNTRACED = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * A span per request (W3C `traceparent` honoured), named by route template,
 * with child spans for hooks and handlers. Registered first, so every hook
 * added after it is traced. Job submissions carry the request's context into
 * the queue (job-intake), where the worker's spans pick it up.
 */
export async function registerTracing(app: FastifyInstance): Promise<void> {
  const instrumentation = new FastifyOtelInstrumentation({
    registerOnInitialization: false,
    ignorePaths: ({ url }) => UNTRACED.has(url),
    requestHook: (span, request) => span.updateName(`${request.method} ${request.routeOptions.url ?? 'unmatched'}`),
  });
  await app.register(instrumentation.plugin());
}
