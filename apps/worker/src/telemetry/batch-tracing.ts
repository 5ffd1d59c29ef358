import { SpanKind, SpanStatusCode, trace, type Link, type Span } from '@opentelemetry/api';
import { contextFrom, tracer, within } from '@inferq/core';
import type { JobAck } from '@inferq/queue';

// A batch serves jobs from many requests, so it cannot sit inside any one
// request's trace: the batch span starts a trace of its own and links to every
// job's, and each traced job gets a span in its request's trace (submit to
// the end of its queue job, linked back to the batch). From a request, a trace viewer then leads
// to the batch that ran it and from the batch to every request it served.

function fail(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

/** What a job's span is made from: the job, its request's trace context, and its queue job's handle, whose use ends the span. */
export interface TracedJob {
  jobId: string;
  model: string;
  modelVersion: number;
  createdAtMs: number;
  attemptsMade: number;
  traceContext?: Record<string, string>;
  ack: Pick<JobAck, 'outcome'>;
}

/** Runs a batch under a batch span; each traced job gets a span of its own, ended when its queue job's handle is used. */
export function traceBatch<T>(batchId: string, batch: readonly TracedJob[], run: (span: Span) => Promise<T>): Promise<T> {
  const { model, modelVersion } = batch[0]!;
  const links: Link[] = batch.flatMap((job) => {
    const submitted = job.traceContext && trace.getSpanContext(contextFrom(job.traceContext));
    return submitted ? [{ context: submitted }] : [];
  });
  const attributes = { 'inferq.batch.id': batchId, 'inferq.model': model, 'inferq.model.version': modelVersion };
  const span = tracer().startSpan(`batch ${model}`, {
    root: true,
    kind: SpanKind.CONSUMER,
    links,
    attributes: { ...attributes, 'messaging.batch.message_count': batch.length },
  });
  for (const job of batch) if (job.traceContext) traceJob(job, span, attributes);
  return run(span).finally(() => span.end());
}

function traceJob(job: TracedJob, batchSpan: Span, attributes: Record<string, string | number>): void {
  const span = tracer().startSpan(
    `job ${job.model}`,
    {
      kind: SpanKind.CONSUMER,
      startTime: job.createdAtMs,
      links: [{ context: batchSpan.spanContext() }],
      attributes: { ...attributes, 'inferq.job.id': job.jobId, 'inferq.job.attempt': job.attemptsMade + 1 },
    },
    contextFrom(job.traceContext),
  );
  void job.ack.outcome.then((outcome) => {
    if (outcome.kind === 'fail') fail(span, outcome.error);
    else if (outcome.kind === 'release') fail(span, new Error(outcome.reason));
    span.end();
  });
}

/** Runs one step of a batch (claim, read inputs, inference, store) as a child span of the batch's; outside a batch, just runs it. */
export async function traceStep<T>(parent: Span | undefined, name: string, task: () => Promise<T>): Promise<T> {
  if (!parent) return task();
  const span = tracer().startSpan(name, {}, within(parent));
  try {
    return await task();
  } catch (err) {
    fail(span, err);
    throw err;
  } finally {
    span.end();
  }
}
