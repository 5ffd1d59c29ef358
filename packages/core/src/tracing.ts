import { propagation, ROOT_CONTEXT, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, ParentBasedSampler, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { Type, type Static, type TObject } from '@sinclair/typebox';

/** The OpenTelemetry variables each app reads (standard names, so collectors' docs apply as written). */
export const tracingConfig = {
  /** OTLP/HTTP base URL of a collector (e.g. `http://jaeger:4318`); spans go to `<url>/v1/traces`. Unset: no tracing. */
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://' })),
  /** Overrides the service name spans are reported under (`inferq-api`, `inferq-worker`). */
  OTEL_SERVICE_NAME: Type.Optional(Type.String({ minLength: 1 })),
  /** Share of new traces recorded, 0 to 1; a request whose `traceparent` says sampled is always traced (parent-based). */
  OTEL_TRACES_SAMPLER_ARG: Type.Number({ default: 1, minimum: 0, maximum: 1 }),
  /** Most milliseconds a finished span waits before it is exported. */
  OTEL_BSP_SCHEDULE_DELAY: Type.Integer({ default: 5_000, minimum: 0 }),
};

export interface Tracing {
  /** Exports what is buffered; called at shutdown. */
  shutdown(): Promise<void>;
}

/**
 * Starts exporting spans over OTLP/HTTP when an endpoint is configured, with
 * W3C trace context as the propagator. Without one, the OpenTelemetry API
 * stays a no-op: spans cost nothing and no context is injected into jobs.
 */
function startTracing(options: { serviceName: string; endpoint?: string; sampleRatio: number; exportDelayMs: number }): Tracing {
  if (!options.endpoint) return { shutdown: async () => {} };
  const exporter = new OTLPTraceExporter({ url: `${options.endpoint.replace(/\/+$/, '')}/v1/traces` });
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(options.sampleRatio) }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: options.exportDelayMs })],
  });
  provider.register();
  return { shutdown: () => provider.shutdown() };
}

/** An app's config as far as tracing reads it (tracingConfig's variables). */
export type TracingConfig = Static<TObject<typeof tracingConfig>>;

/**
 * Starts tracing from an app's config, under OTEL_SERVICE_NAME or else `serviceName`. Every process and thread that
 * starts spans calls it first thing, so every span has a provider, and shuts it down last, so its last spans go out.
 */
export const startTracingFromConfig = (config: TracingConfig, serviceName: string): Tracing =>
  startTracing({
    serviceName: config.OTEL_SERVICE_NAME ?? serviceName,
    endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
    sampleRatio: config.OTEL_TRACES_SAMPLER_ARG,
    exportDelayMs: config.OTEL_BSP_SCHEDULE_DELAY,
  });

export const tracer = (): Tracer => trace.getTracer('inferq');

// Trace context is passed by hand (request → job payload → batch), never made
// "active": entering a context switches on Node 20's AsyncLocalStorage for the
// whole process, which cost the submit path a fifth of its rate when measured.

/** A span's context as carrier fields (`traceparent`, `tracestate`) to store with a job; undefined when not tracing. */
export function traceCarrier(span: Span): Record<string, string> | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(ROOT_CONTEXT, span), carrier);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

/** The context a carrier (an HTTP request's headers, a job's stored fields) was sent from; the root context without one. */
export const contextFrom = (carrier: Record<string, string | string[] | undefined> | undefined): Context =>
  carrier ? propagation.extract(ROOT_CONTEXT, carrier) : ROOT_CONTEXT;

/** The context whose parent is `span`, for starting its children. */
export const within = (span: Span): Context => trace.setSpan(ROOT_CONTEXT, span);

/** trace_id and span_id of a recorded span, for a logger's bindings; nothing for one that is not sampled. */
export function traceIds(span: Span): { trace_id?: string; span_id?: string } {
  const { traceId, spanId } = span.spanContext();
  return span.isRecording() ? { trace_id: traceId, span_id: spanId } : {};
}
