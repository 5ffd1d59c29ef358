import { randomUUID } from 'node:crypto';
import type { Span } from '@opentelemetry/api';
import pRetry from 'p-retry';
import type { RawTensor, StoredTensor } from '@inferq/contracts';
import { traceIds, type Logger } from '@inferq/core';
import {
  expireRunningJobs,
  findJobsWithoutRow,
  isDatabaseUnavailable,
  markJobsRunning,
  recordLostJobs,
  startJobs,
  type BatchRun,
  type JobFailure,
  type Pool,
} from '@inferq/db';
import { UnrecoverableError, unpackCarried, type CarriedInputs } from '@inferq/queue';
import type { ModelSession } from '@inferq/inference';
import type { TensorStore } from '@inferq/storage';
import type { BatchStats } from '../telemetry/batch-stats.ts';
import { traceBatch, traceStep } from '../telemetry/batch-tracing.ts';
import type { InferenceProfiles } from './inference-profiles.ts';
import { classifyError, isOutage, type ClassifiedError } from './job-errors.ts';
import { loadJobInputs } from './job-inputs.ts';
import type { ModelHealth } from '../sessions/model-health.ts';
import { ownerOfLoadFailure } from '../sessions/node-faults.ts';
import { isLastAttempt, type PendingJob } from './pending-job.ts';
import type { ResultWriter } from './result-writer.ts';
import type { WorkerMetrics } from '../telemetry/worker-metrics.ts';
import type { WorkerStatusTracker } from '../telemetry/worker-status.ts';

/** Where a step logs and, inside a batch, the span its own span goes under and the batch whose claim fences its writes. */
interface StepScope {
  log: Logger;
  span?: Span;
  batch?: { id: string; size: number; claimedAtMs: number };
  /** Ends the batch's running mark: no mark is written after it resolves (see markWhenSlow). */
  stopMark?: () => Promise<void>;
}

type JobAttempt = Pick<PendingJob, 'jobId' | 'attemptsMade' | 'maxAttempts'>;
/** A job its batch has claimed: `attempt` is the attempt the batch runs, which fences its writes. */
type ClaimedJob = PendingJob & { attempt: number; nodeFaults: string[] };
type LoadedJob = ClaimedJob & { inputs: RawTensor[] };

/** Backoff between tries while Postgres or S3 is down: quick at first, then every 2 s. */
const OUTAGE_BACKOFF = { retries: Number.POSITIVE_INFINITY, minTimeout: 100, maxTimeout: 2_000, factor: 2, randomize: true };

/**
 * How long a batch runs before it writes its claim, by default
 * (WORKER_RUNNING_MARK_MS): a device's batch usually takes milliseconds, and a
 * claim written for each would be a second write of every job; a batch this
 * slow is one a client may watch.
 */
const DEFAULT_RUNNING_MARK_MS = 250;

/** Rows a job puts along the batch dimension. */
const itemsOf = (job: LoadedJob): number => Math.max(1, job.inputs[0]?.shape[0] ?? 1);

function failureFor(job: JobAttempt & { attempt?: number }, e: ClassifiedError): { failure: JobFailure; error: Error } {
  const final = !e.retryable || isLastAttempt(job);
  const error = e.retryable ? new Error(`${e.code}: ${e.message}`) : new UnrecoverableError(`${e.code}: ${e.message}`);
  return { failure: { id: job.jobId, code: e.code, message: e.message, final, attempt: job.attempt }, error };
}

/** What a batch needs of the device's host (the sessions, health, status and metrics): in process the objects, in a feeder thread proxies. */
export interface RunnerSessions {
  getSession(model: string, version: number): Promise<ModelSession>;
  discard(model: string, version: number, session: ModelSession): Promise<void>;
}
export type RunnerHealth = Pick<ModelHealth, 'isFaulted' | 'fault'>;
export type RunnerStatus = Pick<WorkerStatusTracker, 'batchStarted' | 'batchEnded'>;
export type RunnerMetrics = Pick<WorkerMetrics, 'batchStarted' | 'batchRan' | 'jobsFinished' | 'jobsReleased' | 'jobsRecordLost'>;

export interface BatchRunnerDeps {
  pool: Pool;
  sessions: RunnerSessions;
  /** Reads the jobs' inputs (inline or S3). */
  tensors: TensorStore;
  writer: ResultWriter;
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
 * Runs one batch end to end: claim the rows (the claim hands back their
 * inputs, but for those carried beside the queue entries), one session run,
 * store every job's outcome, then use each queue job's handle (ack, fail or release). Nothing is acknowledged before
 * Postgres holds its outcome (invariant 2); each job fails alone. While Postgres or S3 is down, each
 * step waits for it to come back, holding its jobs (BullMQ renews their locks
 * in Redis meanwhile): a finished result is stored late, not computed twice,
 * and no job spends an attempt on an outage.
 */
export function createBatchRunner(deps: BatchRunnerDeps) {
  /**
   * Runs `step`, again and again while it fails because Postgres or S3 is
   * unreachable (or whatever `waitOut` says), until it succeeds or the worker stops.
   */
  function outlastOutage<T>(step: string, scope: StepScope, task: () => Promise<T>, waitOut: (err: unknown) => boolean = isOutage): Promise<T> {
    return traceStep(scope.span, step, () =>
      pRetry(task, {
        ...OUTAGE_BACKOFF,
        shouldRetry: ({ error }) => waitOut(error) && !deps.signal?.aborted,
        onFailedAttempt: ({ error, attemptNumber }) => {
          if (waitOut(error)) scope.log.warn({ step, attempt: attemptNumber, err: error.message }, 'dependency unavailable; retrying');
        },
      }),
    );
  }

  /** The batch's run as its writes record it: batch, worker, size and the time since the claim. */
  const runOf = (batch: NonNullable<StepScope['batch']>): BatchRun => ({
    batchId: batch.id,
    workerId: deps.workerId,
    batchSize: batch.size,
    ranMs: performance.now() - batch.claimedAtMs,
  });

  async function settleFailures(failed: Array<{ job: ClaimedJob; e: ClassifiedError }>, scope: StepScope): Promise<void> {
    // Most batches have none: no statement, no span.
    if (failed.length === 0) return;
    const outcomes = failed.map(({ job, e }) => ({ job, ...failureFor(job, e) }));
    await outlastOutage('store failures', scope, () =>
      deps.writer.writeFailures(
        outcomes.map((o) => o.failure),
        runOf(scope.batch!),
      ),
    );
    deps.metrics?.jobsFinished(
      outcomes.filter((o) => o.failure.final).map((o) => o.job),
      'failed',
    );
    for (const o of outcomes) o.job.ack.fail(o.error);
  }

  /**
   * Reads each claimed job's inputs (inline, or from S3); a job whose inputs
   * cannot be read fails alone, but an unreachable S3 is waited out.
   */
  async function loadInputs(jobs: Array<{ job: ClaimedJob; inputs: StoredTensor[] }>, scope: StepScope): Promise<LoadedJob[]> {
    const loaded = await outlastOutage('read inputs', scope, async () => {
      const settled = await Promise.allSettled(jobs.map(({ inputs }) => loadJobInputs(inputs, deps.tensors)));
      const outage = settled.find((r) => r.status === 'rejected' && isOutage(r.reason));
      if (outage) throw (outage as PromiseRejectedResult).reason;
      return settled;
    });
    const failed = jobs.flatMap(({ job }, i) => {
      const r = loaded[i]!;
      return r.status === 'rejected' ? [{ job, e: classifyError(r.reason) }] : [];
    });
    await settleFailures(failed, scope);
    return jobs.flatMap(({ job }, i) => {
      const r = loaded[i]!;
      return r.status === 'fulfilled' ? [{ ...job, inputs: r.value }] : [];
    });
  }

  async function runClaimed(startedAt: Date, jobs: LoadedJob[], scope: StepScope): Promise<BatchStats> {
    const { model, modelVersion } = jobs[0]!;
    const batchId = scope.batch!.id;
    const stats = {
      batchId,
      model,
      modelVersion,
      batchSize: jobs.length,
      inferMs: 0,
      sessionMs: 0,
      succeeded: 0,
      failed: 0,
      queueWaitMs: Math.round(Date.now() - Math.min(...jobs.map((j) => j.createdAtMs))),
    };
    let session;
    const loadStartedMs = Date.now();
    try {
      // Postgres down stops every worker alike: wait. S3 out of reach may be this worker's alone: give the jobs back (settleLoadFailure).
      session = await outlastOutage('load model', scope, () => deps.sessions.getSession(model, modelVersion), isDatabaseUnavailable);
    } catch (err) {
      return { ...stats, failed: await settleLoadFailure(jobs, err, scope) };
    }
    // A cold load is not what the next batch will take: it stays out of the service time.
    const loadMs = Date.now() - loadStartedMs;
    const sessionStartedMs = performance.now();
    const run = await traceStep(scope.span, 'inference', () => session.infer(jobs.map((j) => ({ inputs: j.inputs })))).catch(async (err: unknown) => {
      await deps.sessions.discard(model, modelVersion, session);
      throw err;
    });
    stats.inferMs = run.inferMs;
    stats.sessionMs = performance.now() - sessionStartedMs;
    const ok: Array<{ job: LoadedJob; outputs: (typeof run.results)[number] & { ok: true } }> = [];
    const bad: Array<{ job: LoadedJob; e: ClassifiedError }> = [];
    run.results.forEach((r, i) => {
      const job = jobs[i]!;
      if (r.ok) ok.push({ job, outputs: r });
      else bad.push({ job, e: { code: r.code, message: r.message, retryable: r.code === 'INFERENCE_FAILED' } });
    });
    const items = jobs.reduce((n, job) => n + itemsOf(job), 0);
    // Device time is split by items, the rows each job put along the batch dimension.
    const results = ok.map(({ job, outputs }) => ({
      id: job.jobId,
      attempt: job.attempt,
      createdAtMs: job.createdAtMs,
      outputs: outputs.outputs,
      inferMs: run.inferMs,
      items: itemsOf(job),
      deviceMs: (run.inferMs * itemsOf(job)) / items,
    }));
    const batch = {
      id: batchId,
      modelName: model,
      modelVersion,
      workerId: deps.workerId,
      device: deps.device,
      provider: session.provider,
      size: jobs.length,
      items,
      startedAt,
      inferMs: run.inferMs,
    };
    // No running mark starts after inference; one already sent finishes before the results go, so a job's
    // `running` is never written beside its end (and the two statements never queue on the same rows).
    await scope.stopMark?.();
    const written = await outlastOutage('store results', scope, () => deps.writer.writeSuccesses(batch, runOf(scope.batch!), results));
    deps.profiles.of(model).record(items, run.inferMs, Date.now() - startedAt.getTime() - loadMs);
    deps.metrics?.batchRan(model, jobs.length, run.inferMs);
    deps.metrics?.jobsFinished(
      ok.filter(({ job }) => written.has(job.jobId)).map(({ job }) => job),
      'succeeded',
    );
    const refused = ok.filter(({ job }) => !written.has(job.jobId)).map(({ job }) => job.jobId);
    // Canceled meanwhile, or finished first by another attempt after this worker's lock expired: that attempt's result stands.
    if (refused.length > 0)
      scope.log.warn({ jobIds: refused.slice(0, 20), refused: refused.length }, 'results not stored: the jobs were canceled or finished by another attempt');
    for (const { job } of ok) job.ack.ack();
    await settleFailures(bad, scope);
    return { ...stats, succeeded: ok.length, failed: bad.length };
  }

  /**
   * A model that would not load: the model's fault fails the jobs (not
   * registered, a bad artifact, or a load failure that followed the job here
   * from another worker); a fault of this worker's gives them back to the
   * queue without spending an attempt and stops this worker taking the model
   * until it loads here again. Returns how many failed.
   */
  async function settleLoadFailure(jobs: ClaimedJob[], err: unknown, scope: StepScope): Promise<number> {
    const e = classifyError(err);
    const loadError = e.code === 'INTERNAL' ? { ...e, code: 'MODEL_LOAD_FAILED' as const } : e;
    const owner = ownerOfLoadFailure(err);
    const followed = (job: ClaimedJob) => owner === 'model' || (owner === 'suspect' && job.nodeFaults.some((w) => w !== deps.workerId));
    const modelFault = jobs.filter(followed);
    const nodeFault = jobs.filter((job) => !followed(job));
    await settleFailures(
      modelFault.map((job) => ({ job, e: { ...loadError, retryable: false } })),
      scope,
    );
    if (nodeFault.length > 0) {
      const { model, modelVersion } = jobs[0]!;
      const message = `worker ${deps.workerId} could not load ${model}:${modelVersion} (${loadError.code}: ${e.message}); the job went back to the queue`;
      await giveBack(nodeFault, message, scope);
      await deps.health?.fault(model, modelVersion, loadError.code, e.message);
    }
    return modelFault.length;
  }

  /** Gives jobs back to the queue, unspent, for another worker: their claim is undone in Postgres first. */
  async function giveBack(jobs: ClaimedJob[], message: string, scope: StepScope): Promise<void> {
    // A release makes the rows queued at the attempt before this claim again, which is what a running mark matches:
    // a mark written after it would put the jobs back in this batch, and the next claim would count a second attempt.
    await scope.stopMark?.();
    await outlastOutage('give back jobs', scope, () =>
      deps.writer.releaseJobs(
        scope.batch!.id,
        jobs.map((j) => ({ id: j.jobId, attempt: j.attempt, code: 'WORKER_FAULT', message })),
      ),
    );
    deps.metrics?.jobsReleased(jobs);
    scope.log.warn({ jobs: jobs.length }, 'jobs given back to the queue: a fault of this worker, not of the jobs');
    for (const job of jobs) job.ack.release(message);
  }

  /**
   * Expires the jobs that would finish after their deadline if the batch ran
   * now, by the model's measured inference time for a batch this size (none
   * before its first run), so they do not take the device; returns the rest.
   */
  async function dropLateJobs(jobs: LoadedJob[], scope: StepScope): Promise<LoadedJob[]> {
    if (!deps.deadlines || !jobs.some((j) => j.deadlineAt !== undefined)) return jobs;
    const expectedMs = deps.profiles.of(jobs[0]!.model).expectedMs(jobs.reduce((n, j) => n + itemsOf(j), 0));
    if (expectedMs === undefined) return jobs;
    const done = Date.now() + expectedMs;
    const late = jobs.filter((j) => j.deadlineAt !== undefined && done > j.deadlineAt);
    if (late.length === 0) return jobs;
    const message = `cannot finish by its deadline: the batch is expected to take ${expectedMs.toFixed(1)} ms`;
    await outlastOutage('expire late jobs', scope, () =>
      expireRunningJobs(
        deps.pool,
        runOf(scope.batch!),
        late.map((j) => ({ id: j.jobId, attempt: j.attempt, message })),
      ),
    );
    scope.log.info({ expired: late.length, expectedMs }, 'jobs expired before running: they would miss their deadlines');
    deps.metrics?.jobsFinished(late, 'expired');
    for (const job of late) job.ack.ack();
    return jobs.filter((j) => !late.includes(j));
  }

  /**
   * Writes the batch's claim once it has run for `runningMarkMs` (clients then
   * see its jobs running); a quick batch's jobs go from queued to their end
   * with no claim written. A mark that fails is only logged: the batch's own
   * writes carry its claim either way.
   */
  function markWhenSlow(jobs: ClaimedJob[], scope: StepScope): () => Promise<void> {
    let writing: Promise<unknown> = Promise.resolve();
    const timer = setTimeout(() => {
      const claims = jobs.map((j) => ({ id: j.jobId, attempt: j.attempt }));
      writing = markJobsRunning(deps.pool, runOf(scope.batch!), claims).catch((err: unknown) =>
        scope.log.debug({ err: (err as Error).message }, 'running mark not written; the batch goes on'),
      );
    }, deps.runningMarkMs ?? DEFAULT_RUNNING_MARK_MS);
    // Stopped: no mark starts any more, and one already sent has finished.
    return async () => {
      clearTimeout(timer);
      await writing;
    };
  }

  /**
   * Of the entries a claim left out, those whose job has no row at all: accepted jobs the record lost (a failover to an
   * asynchronous standby dropped the last commits after the API had answered 202 and queued them), not canceled or
   * finished ones. Recorded in lost_jobs so that a poll answers 410 JOB_LOST, counted and said once a batch (invariant
   * 12: never silent); the caller acknowledges them with the rest. One statement, only when the claim came back short;
   * one more when some are lost. A failure other than an outage (lost_jobs not yet migrated on a rolling update) is
   * logged, and the entries are acknowledged as before: a lost job cannot run either way.
   */
  async function recordLost(unclaimed: PendingJob[], scope: StepScope): Promise<void> {
    const model = unclaimed[0]!.model;
    try {
      const ids = unclaimed.map((j) => j.jobId);
      const lost = await outlastOutage('find lost jobs', scope, () => findJobsWithoutRow(deps.pool, ids));
      if (lost.length === 0) return;
      const recorded = await outlastOutage('record lost jobs', scope, () =>
        recordLostJobs(
          deps.pool,
          lost.map((id) => ({ id, model })),
        ),
      );
      // A replay of entries recorded already (a crash before their acknowledgement) is not counted twice.
      deps.metrics?.jobsRecordLost(model, recorded.size);
      scope.log.warn(
        { jobIds: lost, lost: lost.length, recorded: recorded.size },
        'queue entries whose job row is gone: the record lost these accepted jobs (a failover to an asynchronous standby dropped its last commits); ' +
          'recorded as lost, clients polling them get 410 JOB_LOST',
      );
    } catch (err) {
      // The worker stopping in an outage: the batch goes back whole.
      if (isOutage(err)) throw err;
      scope.log.error({ err, jobs: unclaimed.length }, 'could not tell lost jobs from canceled ones; the entries are acknowledged unrecorded');
    }
  }

  /**
   * The inputs carried beside the batch's queue entries, read and dropped in one Redis round trip; a job whose bytes are
   * not there is left out (its claim reads its row's), and so is one that runs again.
   */
  async function readCarried(batch: PendingJob[]): Promise<Map<string, StoredTensor[]>> {
    const carrying = batch.filter((j) => j.carriedInputs);
    const found = new Map<string, StoredTensor[]>();
    if (!deps.carried || carrying.length === 0) return found;
    const bytes = await deps.carried.take(
      batch[0]!.model,
      carrying.map((j) => j.jobId),
    );
    carrying.forEach((job, i) => {
      const inputs = unpackCarried(job.carriedInputs!, bytes[i] ?? null);
      if (inputs) found.set(job.jobId, inputs);
    });
    return found;
  }

  /** Claims, reads, runs and stores one batch; uses every job's handle, never rejects. Returns what a batch that ran came to. */
  async function runSteps(batchId: string, batch: PendingJob[], span: Span): Promise<BatchStats | undefined> {
    const log = deps.logger.child({ model: batch[0]!.model, modelVersion: batch[0]!.modelVersion, batchId, ...traceIds(span) });
    if (deps.health?.isFaulted(batch[0]!.model)) {
      // Jobs this worker held when it stopped taking the model: back to the queue unclaimed, for another worker.
      for (const job of batch) job.ack.release('this worker cannot load the model now');
      deps.metrics?.jobsReleased(batch);
      return;
    }
    let stopMark = async (): Promise<void> => {};
    try {
      // A claim that fails on an outage changed nothing: retried, it spends no attempt.
      const startedAt = new Date();
      const carried = await readCarried(batch);
      const live = await outlastOutage('claim', { log, span }, () =>
        startJobs(deps.pool, { ids: batch.map((j) => j.jobId), carried: new Set(carried.keys()), workerId: deps.workerId, batchId, batchSize: batch.length }),
      );
      // The batch's writes fence to it and time its start from here.
      const scope: StepScope = { log, span, batch: { id: batchId, size: batch.length, claimedAtMs: performance.now() } };
      // Canceled or already finished (a replay after a crash), or lost by the record (no row at all: recordLost): acknowledge without running.
      const unclaimed = live.size < batch.length ? batch.filter((job) => !live.has(job.jobId)) : [];
      if (unclaimed.length > 0) await recordLost(unclaimed, scope);
      for (const job of unclaimed) job.ack.ack();
      const claimed = batch.flatMap((job) => {
        const row = live.get(job.jobId);
        // A row the claim read without inputs is one whose bytes the batch holds.
        return row ? [{ job: { ...job, attempt: row.attempt, nodeFaults: row.nodeFaults }, inputs: carried.get(job.jobId) ?? row.inputs ?? [] }] : [];
      });
      if (claimed.length === 0) return;
      stopMark = scope.stopMark = markWhenSlow(
        claimed.map((c) => c.job),
        scope,
      );
      const loaded = await dropLateJobs(await loadInputs(claimed, scope), scope);
      if (loaded.length === 0) return;
      deps.status?.batchStarted(batchId, loaded[0]!.model, loaded.length);
      deps.metrics?.batchStarted(loaded);
      const stats = await runClaimed(startedAt, loaded, scope);
      log.info(
        { batchSize: stats.batchSize, inferMs: Math.round(stats.inferMs * 100) / 100, queueWaitMs: stats.queueWaitMs, failed: stats.failed },
        'batch completed',
      );
      deps.status?.batchEnded(batchId, stats);
      return stats;
    } catch (err) {
      deps.status?.batchEnded(batchId);
      // A step failed outright, or an outage outlasted the worker: the jobs whose outcome was not stored fail this attempt, and the queue retries them.
      log.error({ err }, 'batch failed before its results were stored');
      const error = err instanceof Error ? err : new Error(String(err));
      for (const job of batch) if (!job.ack.isSettled) job.ack.fail(error);
      return undefined;
    } finally {
      // No mark after the batch's end; one in flight settles by itself (it never rejects).
      void stopMark();
    }
  }

  return {
    /**
     * Records a job that failed before it could join a batch (an unreadable
     * payload) and returns the error to fail its queue job with.
     */
    async failIntake(job: JobAttempt, err: unknown): Promise<Error> {
      const { failure, error } = failureFor(job, classifyError(err));
      await outlastOutage('store failures', { log: deps.logger.child({ jobId: job.jobId }) }, () => deps.writer.writeFailures([failure]));
      return error;
    },
    /** Claims, runs and stores one batch, then uses each job's queue handle; never rejects. Resolves with the batch's stats when it ran. */
    processBatch(batch: PendingJob[]): Promise<BatchStats | undefined> {
      const batchId = randomUUID();
      return traceBatch(batchId, batch, (span) => runSteps(batchId, batch, span));
    },
  };
}
export type BatchRunner = ReturnType<typeof createBatchRunner>;
