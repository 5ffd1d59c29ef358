import type { AckOutcome } from '@inferq/queue';
import type { WorkerMetrics } from '../telemetry/worker-metrics.ts';
import type { BatchScope } from './batch-claim.ts';
import { acknowledgementOf, isFinalFailure, queueErrorOf, type JobOutcome } from './batch-outcome.ts';
import type { BatchRecord, BatchStore } from './batch-store.ts';
import { classifyError } from './job-errors.ts';
import { outlastOutage, type StepScope } from './outlast-outage.ts';
import type { PendingJob } from './pending-job.ts';

export type CompletionMetrics = Pick<WorkerMetrics, 'jobsFinished' | 'jobsReleased'>;

/**
 * The one function that uses a queue entry's handle. Every caller has its job's outcome in Postgres first
 * (invariant 2): completion's own writes below; a claim that found the job ended or lost; a job held back before its
 * claim, or one whose batch broke before anything was written, whose row the batch left as it was.
 */
export function acknowledge(entries: Iterable<{ job: Pick<PendingJob, 'ack'>; ack: AckOutcome }>): void {
  for (const { job, ack } of entries) {
    if (ack.kind === 'ack') job.ack.ack();
    else if (ack.kind === 'fail') job.ack.fail(ack.error);
    else job.ack.release(ack.reason);
  }
}

type Of<K extends JobOutcome['kind']> = Extract<JobOutcome, { kind: K }>;

/**
 * Stores a batch's outcomes, then acknowledges them: each kind in one write (outlasting an outage), its metrics, then
 * its entries. Most batches only have successes: a kind with no outcome costs no statement.
 */
export function createCompletion(deps: { store: BatchStore; metrics?: CompletionMetrics }) {
  const { store, metrics } = deps;

  async function storeSucceeded(done: Array<Of<'succeeded'>>, record: BatchRecord, scope: BatchScope): Promise<void> {
    // No running mark starts after inference; one already sent finishes before the results go, so a job's
    // `running` is never written beside its end (and the two statements never queue on the same rows).
    await scope.stopMark();
    const results = done.map(({ job, outputs, inferMs, items, deviceMs }) => ({
      id: job.jobId,
      attempt: job.attempt,
      createdAtMs: job.createdAtMs,
      outputs,
      inferMs,
      items,
      deviceMs,
    }));
    const written = await outlastOutage('store results', scope, () => store.writeSuccesses(scope.claim, record, results));
    metrics?.jobsFinished(
      done.filter((o) => written.has(o.job.jobId)).map((o) => o.job),
      'succeeded',
    );
    const refused = done.filter((o) => !written.has(o.job.jobId)).map((o) => o.job.jobId);
    // Canceled meanwhile, or finished first by another attempt after this worker's lock expired: that attempt's result stands.
    if (refused.length > 0)
      scope.log.warn({ jobIds: refused.slice(0, 20), refused: refused.length }, 'results not stored: the jobs were canceled or finished by another attempt');
  }

  async function storeFailed(failed: Array<Of<'failed'>>, scope: BatchScope): Promise<void> {
    const failures = failed.map(({ job, error }) => ({
      id: job.jobId,
      code: error.code,
      message: error.message,
      final: isFinalFailure(job, error),
      attempt: job.attempt,
    }));
    await outlastOutage('store failures', scope, () => store.writeFailures(failures, scope.claim));
    metrics?.jobsFinished(
      failed.filter((_, i) => failures[i]!.final).map((o) => o.job),
      'failed',
    );
  }

  async function storeExpired(expired: Array<Of<'expired'>>, scope: BatchScope): Promise<void> {
    await outlastOutage('expire late jobs', scope, () =>
      store.expire(
        scope.claim,
        expired.map((o) => ({ id: o.job.jobId, attempt: o.job.attempt, message: o.message })),
      ),
    );
    scope.log.info({ expired: expired.length, why: expired[0]!.message }, 'jobs expired before running: they would miss their deadlines');
    metrics?.jobsFinished(
      expired.map((o) => o.job),
      'expired',
    );
  }

  async function storeReleased(released: Array<Of<'released'>>, scope: BatchScope): Promise<void> {
    // A release makes the rows queued at the attempt before this claim again, which is what a running mark matches:
    // a mark written after it would put the jobs back in this batch, and the next claim would count a second attempt.
    await scope.stopMark();
    await outlastOutage('give back jobs', scope, () =>
      store.release(
        scope.claim,
        released.map((o) => ({ id: o.job.jobId, attempt: o.job.attempt, code: 'WORKER_FAULT', message: o.reason })),
      ),
    );
    metrics?.jobsReleased(released.map((o) => o.job));
    scope.log.warn({ jobs: released.length }, 'jobs given back to the queue: a fault of this worker, not of the jobs');
  }

  /** Stores then acknowledges one kind's outcomes, when there are any. */
  async function completeKind<K extends JobOutcome['kind']>(outcomes: JobOutcome[], kind: K, write: (of: Array<Of<K>>) => Promise<void>): Promise<void> {
    const of = outcomes.filter((o): o is Of<K> => o.kind === kind);
    if (of.length === 0) return;
    await write(of);
    acknowledge(of.map((o) => ({ job: o.job, ack: acknowledgementOf(o) })));
  }

  return {
    /**
     * Stores the outcomes, then acknowledges them, kind by kind: successes (with the batch's `record`, written
     * whenever the batch ran, even with none), failures, expiries, releases.
     */
    async complete(outcomes: JobOutcome[], scope: BatchScope, record?: BatchRecord): Promise<void> {
      if (record) {
        const done = outcomes.filter((o): o is Of<'succeeded'> => o.kind === 'succeeded');
        await storeSucceeded(done, record, scope);
        acknowledge(done.map((o) => ({ job: o.job, ack: acknowledgementOf(o) })));
      }
      await completeKind(outcomes, 'failed', (of) => storeFailed(of, scope));
      await completeKind(outcomes, 'expired', (of) => storeExpired(of, scope));
      await completeKind(outcomes, 'released', (of) => storeReleased(of, scope));
    },
    /** Stores the failure of a job that could not join a batch (an unreadable payload), then fails its entry. */
    async failIntake(job: Pick<PendingJob, 'jobId' | 'attemptsMade' | 'maxAttempts' | 'ack'>, err: unknown, scope: StepScope): Promise<void> {
      const error = classifyError(err);
      const failure = { id: job.jobId, code: error.code, message: error.message, final: isFinalFailure(job, error) };
      await outlastOutage('store failures', scope, () => store.writeFailures([failure]));
      acknowledge([{ job, ack: { kind: 'fail', error: queueErrorOf(error) } }]);
    },
  };
}
export type Completion = ReturnType<typeof createCompletion>;
