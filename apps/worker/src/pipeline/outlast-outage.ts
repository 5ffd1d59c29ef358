import type { Span } from '@opentelemetry/api';
import pRetry from 'p-retry';
import type { Logger } from '@inferq/core';
import { traceStep } from '../telemetry/batch-tracing.ts';
import { isOutage } from './job-errors.ts';

/** Where a step logs, the span its own span goes under, and the signal that ends its waits (the worker stopping). */
export interface StepScope {
  log: Logger;
  span?: Span;
  signal?: AbortSignal;
}

/** Backoff between tries while Postgres or S3 is down: quick at first, then every 2 s. */
const OUTAGE_BACKOFF = { retries: Number.POSITIVE_INFINITY, minTimeout: 100, maxTimeout: 2_000, factor: 2, randomize: true };

/**
 * Runs `task` as the traced step `step`, again and again while it fails because Postgres or S3 is unreachable (or
 * whatever `waitOut` says), until it succeeds or the scope's signal aborts: a job never spends an attempt on an
 * outage, and a finished result is stored late rather than computed twice. BullMQ renews the held jobs' locks meanwhile.
 */
export function outlastOutage<T>(step: string, scope: StepScope, task: () => Promise<T>, waitOut: (err: unknown) => boolean = isOutage): Promise<T> {
  return traceStep(scope.span, step, () =>
    pRetry(task, {
      ...OUTAGE_BACKOFF,
      shouldRetry: ({ error }) => waitOut(error) && !scope.signal?.aborted,
      onFailedAttempt: ({ error, attemptNumber }) => {
        if (waitOut(error)) scope.log.warn({ step, attempt: attemptNumber, err: error.message }, 'dependency unavailable; retrying');
      },
    }),
  );
}
