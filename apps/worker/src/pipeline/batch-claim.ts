import type { StoredTensor } from '@inferq/contracts';
import { unpackCarried, type CarriedInputs } from '@inferq/queue';
import type { WorkerMetrics } from '../telemetry/worker-metrics.ts';
import type { BatchClaim, BatchStore } from './batch-store.ts';
import { isOutage } from './job-errors.ts';
import { outlastOutage, type StepScope } from './outlast-outage.ts';
import type { ClaimedJob, PendingJob } from './pending-job.ts';

/** A claimed batch's steps: where they log, the claim that fences their writes, and the end of its running mark. */
export interface BatchScope extends StepScope {
  claim: BatchClaim;
  /** Ends the batch's running mark: no mark is written after it resolves (see markWhenSlow). */
  stopMark(): Promise<void>;
}

export interface ClaimDeps {
  store: BatchStore;
  /** Where the inputs carried beside queue entries are taken (read and dropped at once); without it, every claim reads its rows' inputs. */
  carried?: Pick<CarriedInputs, 'take'>;
  /** A batch still running this long after its claim writes it, so clients see its jobs running (WORKER_RUNNING_MARK_MS). @default 250 */
  runningMarkMs?: number;
  metrics?: Pick<WorkerMetrics, 'jobsRecordLost'>;
}

export interface ClaimedBatch {
  scope: BatchScope;
  /** The jobs the batch runs, with their inputs: carried beside their entries, or read by the claim. */
  claimed: Array<{ job: ClaimedJob; inputs: StoredTensor[] }>;
  /** Entries with nothing to run: canceled, finished already (a replay after a crash), or lost by the record (recorded so). */
  unclaimed: PendingJob[];
}

/**
 * How long a batch runs before it writes its claim, by default (WORKER_RUNNING_MARK_MS): a device's batch usually
 * takes milliseconds, and a claim written for each would be a second write of every job; a batch this slow is one a
 * client may watch.
 */
const DEFAULT_RUNNING_MARK_MS = 250;

/**
 * Claims a batch's jobs in Postgres (a read: the claim is written with the outcome, or by the running mark) with the
 * inputs carried beside their entries, records the entries whose job the record lost, and starts the running mark.
 * A claim that fails on an outage changed nothing: retried, it spends no attempt.
 */
export async function claimBatch(deps: ClaimDeps, batchId: string, batch: PendingJob[], step: StepScope): Promise<ClaimedBatch> {
  const carried = await readCarried(deps, batch);
  const live = await outlastOutage('claim', step, () =>
    deps.store.claim(
      batchId,
      batch.map((j) => j.jobId),
      new Set(carried.keys()),
    ),
  );
  // The batch's writes fence to it and time its start from here.
  const scope: BatchScope = { ...step, claim: { id: batchId, size: batch.length, claimedAtMs: performance.now() }, stopMark: async () => {} };
  const unclaimed = live.size < batch.length ? batch.filter((job) => !live.has(job.jobId)) : [];
  if (unclaimed.length > 0) await recordLost(deps, unclaimed, scope);
  const claimed = batch.flatMap((job) => {
    const row = live.get(job.jobId);
    // A row the claim read without inputs is one whose bytes the batch holds.
    return row ? [{ job: { ...job, attempt: row.attempt, nodeFaults: row.nodeFaults }, inputs: carried.get(job.jobId) ?? row.inputs ?? [] }] : [];
  });
  if (claimed.length > 0)
    scope.stopMark = markWhenSlow(
      deps,
      claimed.map((c) => c.job),
      scope,
    );
  return { scope, claimed, unclaimed };
}

/**
 * The inputs carried beside the batch's queue entries, read and dropped in one Redis round trip; a job whose bytes are
 * not there is left out (its claim reads its row's), and so is one that runs again.
 */
async function readCarried(deps: ClaimDeps, batch: PendingJob[]): Promise<Map<string, StoredTensor[]>> {
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

/**
 * Of the entries a claim left out, those whose job has no row at all: accepted jobs the record lost (a failover to an
 * asynchronous standby dropped the last commits after the API had answered 202 and queued them), not canceled or
 * finished ones. Recorded in lost_jobs so that a poll answers 410 JOB_LOST, counted and said once a batch (invariant
 * 12: never silent); the caller acknowledges them with the rest. One statement, only when the claim came back short;
 * one more when some are lost. A failure other than an outage (lost_jobs not yet migrated on a rolling update) is
 * logged, and the entries are acknowledged as before: a lost job cannot run either way.
 */
async function recordLost(deps: ClaimDeps, unclaimed: PendingJob[], scope: BatchScope): Promise<void> {
  const model = unclaimed[0]!.model;
  try {
    const ids = unclaimed.map((j) => j.jobId);
    const lost = await outlastOutage('find lost jobs', scope, () => deps.store.findWithoutRow(ids));
    if (lost.length === 0) return;
    const recorded = await outlastOutage('record lost jobs', scope, () => deps.store.recordLost(lost.map((id) => ({ id, model }))));
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
 * Writes the batch's claim once it has run for `runningMarkMs` (clients then see its jobs running); a quick batch's
 * jobs go from queued to their end with no claim written. A mark that fails is only logged: the batch's own writes
 * carry its claim either way. Returns its stop: no mark starts any more, and one already sent has finished.
 */
function markWhenSlow(deps: ClaimDeps, jobs: ClaimedJob[], scope: BatchScope): () => Promise<void> {
  let writing: Promise<unknown> = Promise.resolve();
  const timer = setTimeout(() => {
    const claims = jobs.map((j) => ({ id: j.jobId, attempt: j.attempt }));
    writing = deps.store
      .markRunning(scope.claim, claims)
      .catch((err: unknown) => scope.log.debug({ err: (err as Error).message }, 'running mark not written; the batch goes on'));
  }, deps.runningMarkMs ?? DEFAULT_RUNNING_MARK_MS);
  return async () => {
    clearTimeout(timer);
    await writing;
  };
}
