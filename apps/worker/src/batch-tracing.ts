import { SpanKind, SpanStatusCode, trace, type Link, type Span } from '@opentelemetry/api';
import { contextFrom, tracer, within } from '@inferq/core';
import type { PendingJob } from './pending-job.ts';

// A batch serves jobs from many requests, so it cannot sit inside any one
// request's trace: the batch span starts a trace of its own and links to every
// job's, and each traced job gets a span in its request's trace (submit to
// settle, linked back to the batch). From a request, a trace viewer then leads
// to the batch that ran it and from the batch to every request it served.

function fail(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

/** Runs a batch under a batch span; the jobs it gets have their own spans, ended as they settle. */
export function traceBatch(batchId: string, batch: PendingJob[], run: (jobs: PendingJob[], span: Span) => Promise<void>): Promise<void> {
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
  const jobs = batch.map((job) => (job.traceContext ? withJobSpan(job, span, attributes) : job));
  return run(jobs, span).finally(() => span.end());
}

function withJobSpan(job: PendingJob, batchSpan: Span, attributes: Record<string, string | number>): PendingJob {
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
  let ended = false;
  return {
    ...job,
    settle(outcome) {
      if (!ended) {
        ended = true;
        if (!outcome.ok) fail(span, outcome.error);
        span.end();
      }
      job.settle(outcome);
    },
  };
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
