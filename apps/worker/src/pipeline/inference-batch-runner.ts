import { randomUUID } from 'node:crypto';
import type { Span } from '@opentelemetry/api';
import type { CarriedInputs } from '@inferq/queue';
import { traceIds, type Logger } from '@inferq/core';
import type { TensorStore } from '@inferq/storage';
import type { BatchStats } from '../telemetry/batch-stats.ts';
import { traceBatch } from '../telemetry/batch-tracing.ts';
import type { WorkerMetrics } from '../telemetry/worker-metrics.ts';
import type { WorkerStatusTracker } from '../telemetry/worker-status.ts';
import { claimBatch, type BatchScope } from './batch-claim.ts';
import { acknowledge, createCompletion } from './batch-completion.ts';
import { inferBatch, type RunnerHealth, type RunnerSessions } from './batch-inference.ts';
import type { BatchStore } from './batch-store.ts';
import { splitLateJobs } from './deadline-expiry.ts';
import type { InferenceProfiles } from './inference-profiles.ts';
import { readBatchInputs } from './job-inputs.ts';
import type { PendingJob } from './pending-job.ts';

export type { RunnerHealth, RunnerSessions };
export type RunnerStatus = Pick<WorkerStatusTracker, 'batchStarted' | 'batchEnded'>;
export type RunnerMetrics = Pick<WorkerMetrics, 'batchStarted' | 'batchRan' | 'jobsFinished' | 'jobsReleased' | 'jobsRecordLost'>;

export interface InferenceBatchDeps {
  /** Every Postgres write of a batch (and its outputs' S3 writes). */
  store: BatchStore;
  sessions: RunnerSessions;
  /** Reads the jobs' inputs (inline or S3). */
  tensors: TensorStore;
  workerId: string;
  /** What the worker is pinned to (`cpu`, `cuda:N`), recorded on each batch. */
  device: string;
  /** Every run is recorded here; with `deadlines`, a job its batch's expected run time would finish after its deadline is expired unrun. */
  profiles: InferenceProfiles;
  /** Deadline-aware scheduling (DEADLINE_SCHEDULING). */
  deadlines: boolean;
  logger: Logger;
  status?: RunnerStatus;
  metrics?: RunnerMetrics;
  /** Aborted when the worker stops: outage retries end, and the batches waiting on them go back to the queue. */
  signal?: AbortSignal;
  /** Told of faults of this worker's own: it stops taking the model until the model loads here again. */
  health?: RunnerHealth;
  /** Where the inputs carried beside queue entries are taken (read and dropped at once); without it, every claim reads its rows' inputs. */
  carried?: Pick<CarriedInputs, 'take'>;
  /** A batch still running this long after its claim writes it (markJobsRunning), so clients see its jobs running (WORKER_RUNNING_MARK_MS). @default 250 */
  runningMarkMs?: number;
}

/**
 * Runs inference batches end to end: claim (batch-claim.ts), read the inputs, expire the jobs that would miss their
 * deadlines, one session run (batch-inference.ts), each step's outcomes stored and then acknowledged
 * (batch-completion.ts). Nothing is acknowledged before Postgres holds its outcome (invariant 2); each job fails alone.
 * While Postgres or S3 is down, each step waits for it to come back, holding its jobs (outlast-outage.ts).
 */
export function createInferenceBatchRunner(deps: InferenceBatchDeps) {
  const completion = createCompletion(deps);

  /** The batch's lifecycle, in order; uses every job's handle, never rejects. Returns what a batch that ran came to. */
  async function run(batchId: string, batch: PendingJob[], span: Span): Promise<BatchStats | undefined> {
    const { model, modelVersion } = batch[0]!;
    const log = deps.logger.child({ model, modelVersion, batchId, ...traceIds(span) });
    if (deps.health?.isFaulted(model)) {
      // Jobs this worker held when it stopped taking the model: back to the queue unclaimed, for another worker.
      deps.metrics?.jobsReleased(batch);
      acknowledge(batch.map((job) => ({ job, ack: { kind: 'release', reason: 'this worker cannot load the model now' } })));
      return undefined;
    }
    let scope: BatchScope | undefined;
    try {
      const startedAt = new Date();
      const claim = await claimBatch(deps, batchId, batch, { log, span, signal: deps.signal });
      scope = claim.scope;
      // Canceled or already finished (a replay after a crash), or lost by the record (recorded so): nothing to run.
      acknowledge(claim.unclaimed.map((job) => ({ job, ack: { kind: 'ack' } })));
      if (claim.claimed.length === 0) return undefined;
      const inputs = await readBatchInputs(claim.claimed, deps.tensors, scope);
      await completion.complete(inputs.failed, scope);
      const { onTime, late } = splitLateJobs(inputs.loaded, deps.profiles, deps.deadlines);
      await completion.complete(late, scope);
      if (onTime.length === 0) return undefined;
      deps.status?.batchStarted(batchId, model, onTime.length);
      deps.metrics?.batchStarted(onTime);
      const stats = await inferBatch({ ...deps, completion }, startedAt, onTime, scope);
      const inferMs = Math.round(stats.inferMs * 100) / 100;
      log.info({ batchSize: stats.batchSize, inferMs, queueWaitMs: stats.queueWaitMs, failed: stats.failed }, 'batch completed');
      deps.status?.batchEnded(batchId, stats);
      return stats;
    } catch (err) {
      deps.status?.batchEnded(batchId);
      // A step failed outright, or an outage outlasted the worker: the jobs whose outcome was not stored fail this
      // attempt (their rows as the batch found them), and the queue retries them.
      log.error({ err }, 'batch failed before its results were stored');
      const error = err instanceof Error ? err : new Error(String(err));
      acknowledge(batch.filter((job) => !job.ack.isAcknowledged).map((job) => ({ job, ack: { kind: 'fail', error } })));
      return undefined;
    } finally {
      // No mark after the batch's end; one in flight settles by itself (it never rejects).
      void scope?.stopMark();
    }
  }

  return {
    /** Stores the failure of a job that could not join a batch (an unreadable payload), then fails its queue entry. */
    failIntake: (job: Pick<PendingJob, 'jobId' | 'attemptsMade' | 'maxAttempts' | 'ack'>, err: unknown): Promise<void> =>
      completion.failIntake(job, err, { log: deps.logger.child({ jobId: job.jobId }), signal: deps.signal }),
    /** Claims, runs and stores one batch, then acknowledges each job's queue entry; never rejects. Resolves with the batch's stats when it ran. */
    run(batch: PendingJob[]): Promise<BatchStats | undefined> {
      const batchId = randomUUID();
      return traceBatch(batchId, batch, (span) => run(batchId, batch, span));
    },
  };
}
export type InferenceBatchRunner = ReturnType<typeof createInferenceBatchRunner>;
