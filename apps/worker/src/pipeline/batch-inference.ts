import type { ModelSession } from '@inferq/inference';
import type { ModelHealth } from '../sessions/model-health.ts';
import { ownerOfLoadFailure } from '../sessions/node-faults.ts';
import type { BatchStats } from '../telemetry/batch-stats.ts';
import { traceStep } from '../telemetry/batch-tracing.ts';
import type { WorkerMetrics } from '../telemetry/worker-metrics.ts';
import type { BatchScope } from './batch-claim.ts';
import type { Completion } from './batch-completion.ts';
import type { JobOutcome } from './batch-outcome.ts';
import type { InferenceProfiles } from './inference-profiles.ts';
import { classifyError, isRecordOutage } from './job-errors.ts';
import { outlastOutage } from './outlast-outage.ts';
import { itemsOf, type ClaimedJob, type LoadedJob } from './pending-job.ts';

/** What a batch needs of the device's host (the sessions, health, status and metrics): in process the objects, in a feeder thread proxies. */
export interface RunnerSessions {
  getSession(model: string, version: number): Promise<ModelSession>;
  discard(model: string, version: number, session: ModelSession): Promise<void>;
}
export type RunnerHealth = Pick<ModelHealth, 'isFaulted' | 'fault'>;

export interface InferenceDeps {
  sessions: RunnerSessions;
  /** Every run is recorded here: the batcher's and the deadline check's expected run times. */
  profiles: InferenceProfiles;
  workerId: string;
  /** What the worker is pinned to (`cpu`, `cuda:N`), recorded on each batch. */
  device: string;
  /** Told of faults of this worker's own: it stops taking the model until the model loads here again. */
  health?: RunnerHealth;
  metrics?: Pick<WorkerMetrics, 'batchRan'>;
  completion: Completion;
}

/**
 * Runs the batch's jobs through one session call and completes every job's outcome with the batch's record; a model
 * that will not load completes them as its load failure says. Resolves with what the batch came to.
 */
export async function inferBatch(deps: InferenceDeps, startedAt: Date, jobs: LoadedJob[], scope: BatchScope): Promise<BatchStats> {
  const { model, modelVersion } = jobs[0]!;
  const stats = {
    batchId: scope.claim.id,
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
    // Postgres down stops every worker alike: wait. S3 out of reach may be this worker's alone: give the jobs back (loadFailureOutcomes).
    session = await outlastOutage('load model', scope, () => deps.sessions.getSession(model, modelVersion), isRecordOutage);
  } catch (err) {
    const outcomes = loadFailureOutcomes(deps.workerId, jobs, err);
    await deps.completion.complete(outcomes, scope);
    const fault = outcomes.find((o) => o.kind === 'released');
    if (fault) {
      const e = classifyError(err);
      await deps.health?.fault(model, modelVersion, e.code === 'INTERNAL' ? 'MODEL_LOAD_FAILED' : e.code, e.message);
    }
    return { ...stats, failed: outcomes.filter((o) => o.kind === 'failed').length };
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
  const items = jobs.reduce((n, job) => n + itemsOf(job), 0);
  const outcomes = run.results.map((r, i): JobOutcome => {
    const job = jobs[i]!;
    if (!r.ok) return { kind: 'failed', job, error: { code: r.code, message: r.message, retryable: r.code === 'INFERENCE_FAILED' } };
    // Device time is split by items, the rows each job put along the batch dimension.
    return { kind: 'succeeded', job, outputs: r.outputs, inferMs: run.inferMs, items: itemsOf(job), deviceMs: (run.inferMs * itemsOf(job)) / items };
  });
  const record = {
    id: scope.claim.id,
    modelName: model,
    modelVersion,
    device: deps.device,
    provider: session.provider,
    size: jobs.length,
    items,
    startedAt,
    inferMs: run.inferMs,
  };
  await deps.completion.complete(outcomes, scope, record);
  deps.profiles.of(model).record(items, run.inferMs, Date.now() - startedAt.getTime() - loadMs);
  deps.metrics?.batchRan(model, jobs.length, run.inferMs);
  const succeeded = outcomes.filter((o) => o.kind === 'succeeded').length;
  return { ...stats, succeeded, failed: jobs.length - succeeded };
}

/**
 * A model that would not load: the model's fault fails the jobs for good (not registered, a bad artifact, or a load
 * failure that followed the job here from another worker); a fault of this worker's gives them back to the queue
 * without spending an attempt, and the caller stops this worker taking the model until it loads here again.
 */
function loadFailureOutcomes(workerId: string, jobs: ClaimedJob[], err: unknown): JobOutcome[] {
  const e = classifyError(err);
  const code = e.code === 'INTERNAL' ? 'MODEL_LOAD_FAILED' : e.code;
  const owner = ownerOfLoadFailure(err);
  const followed = (job: ClaimedJob) => owner === 'model' || (owner === 'suspect' && job.nodeFaults.some((w) => w !== workerId));
  const { model, modelVersion } = jobs[0]!;
  const reason = `worker ${workerId} could not load ${model}:${modelVersion} (${code}: ${e.message}); the job went back to the queue`;
  return jobs.map((job) => (followed(job) ? { kind: 'failed', job, error: { ...e, code, retryable: false } } : { kind: 'released', job, reason }));
}
