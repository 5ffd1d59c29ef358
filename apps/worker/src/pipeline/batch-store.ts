import type { RawTensor } from '@inferq/contracts';
import {
  completeJobs,
  expireRunningJobs,
  failJobs,
  findJobsWithoutRow,
  findUnnamedJobObjects,
  markJobsRunning,
  recordLostJobs,
  releaseJobs,
  startJobs,
  type BatchRun,
  type ClaimedJobRow,
  type JobClaim,
  type JobFailure,
  type NewBatch,
  type Pool,
} from '@inferq/db';
import type { Storage, TensorStore } from '@inferq/storage';

export type { ClaimedJobRow, JobClaim, JobFailure };
/** The batch's own record, written with its results: what ran where (the store adds the worker). */
export type BatchRecord = Omit<NewBatch, 'workerId'>;

/** A batch's claim, which fences its writes: its id, its size, and when it was claimed (each write records the time since). */
export interface BatchClaim {
  id: string;
  size: number;
  claimedAtMs: number;
}

export interface JobOutputs extends JobClaim {
  /** When the job was submitted: its objects are filed under that day. */
  createdAtMs: number;
  outputs: RawTensor[];
  inferMs: number;
  items: number;
  deviceMs: number;
}

/**
 * Every Postgres write of a batch, and the S3 writes of its outputs: the claim, the running mark, each kind of outcome
 * and the record of lost jobs (a dependency-cruiser rule keeps the pipeline's other files off packages/db). Each
 * write is fenced to the batch's claim, so writing it twice leaves the rows as they were; outcomes are written before
 * the queue entries are acknowledged (invariant 2, batch-completion.ts).
 */
export function createBatchStore(deps: { pool: Pool; storage: Storage; tensors: TensorStore; workerId: string }) {
  const { pool, workerId } = deps;
  /** The batch's run as its writes record it: batch, worker, size and the time since the claim. */
  const runOf = (claim: BatchClaim): BatchRun => ({ batchId: claim.id, workerId, batchSize: claim.size, ranMs: performance.now() - claim.claimedAtMs });
  const storeOutputs = (job: JobOutputs, batchId: string) =>
    deps.tensors.putTensors({ jobId: job.id, createdAt: new Date(job.createdAtMs), kind: 'outputs', batchId }, job.outputs);

  return {
    /**
     * Claims the batch's rows (a read: the claim is written with the outcome, or by the running mark); returns the
     * live ones with the attempt the batch runs and their inputs, but for those whose inputs the batch carries.
     */
    claim: (batchId: string, ids: string[], carried: ReadonlySet<string>): Promise<Map<string, ClaimedJobRow>> =>
      startJobs(pool, { ids, carried, workerId, batchId, batchSize: ids.length }),
    /** Writes the claim of a batch still running, so clients see its jobs running. */
    markRunning: (claim: BatchClaim, jobs: JobClaim[]) => markJobsRunning(pool, runOf(claim), jobs),
    /** Of these ids, those with no job row at all (the record lost them). */
    findWithoutRow: (ids: readonly string[]) => findJobsWithoutRow(pool, ids),
    /** Records jobs the record lost; returns the ids not recorded before. */
    recordLost: (jobs: Array<{ id: string; model: string }>) => recordLostJobs(pool, jobs),
    /**
     * Records the batch and its results in one statement, large outputs in S3 first (the tensor store decides);
     * returns the ids whose rows were written: not jobs canceled meanwhile, nor jobs another attempt finished first
     * (this worker's lock had expired).
     */
    async writeSuccesses(claim: BatchClaim, batch: BatchRecord, results: JobOutputs[]): Promise<Set<string>> {
      const stored = await Promise.all(results.map(async (r) => ({ ...r, outputs: await storeOutputs(r, batch.id) })));
      const written = await completeJobs(pool, runOf(claim), stored, { ...batch, workerId });
      // Refused outputs no row names (a retry of this very write finds its rows already written and keeps them) go now;
      // a failed delete is left to the API's orphan sweep, never failing the batch.
      const refused = stored.filter((r) => !written.has(r.id)).flatMap((r) => deps.tensors.objectKeys(r.outputs).map((key) => ({ key, jobId: r.id })));
      if (refused.length > 0) {
        await findUnnamedJobObjects(pool, refused, { keepUnfinished: false })
          .then((keys) => deps.storage.deleteObjects(keys))
          .catch(() => {});
      }
      return written;
    },
    /** Records failures; with `claim`, fenced to the batch's attempts and with its provenance (failJobs). */
    writeFailures: (failures: JobFailure[], claim?: BatchClaim) => failJobs(pool, failures, claim && runOf(claim)),
    /** Ends jobs that would miss their deadlines, unrun. */
    expire: (claim: BatchClaim, jobs: Array<JobClaim & { message: string }>) => expireRunningJobs(pool, runOf(claim), jobs),
    /** Undoes a batch's claim on jobs this worker gives back (a fault of its own), recording the fault on each. */
    release: (claim: BatchClaim, jobs: Array<JobClaim & { code: string; message: string }>) => releaseJobs(pool, claim.id, workerId, jobs),
  };
}
export type BatchStore = ReturnType<typeof createBatchStore>;
