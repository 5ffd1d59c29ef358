import type { RawTensor } from '@inferq/contracts';
import {
  completeJobs,
  failJobs,
  findUnnamedJobObjects,
  releaseJobs,
  type BatchRun,
  type JobClaim,
  type JobFailure,
  type NewBatch,
  type Pool,
} from '@inferq/db';
import type { Storage, TensorStore } from '@inferq/storage';

export interface JobOutputs extends JobClaim {
  /** When the job was submitted: its objects are filed under that day. */
  createdAtMs: number;
  outputs: RawTensor[];
  inferMs: number;
  items: number;
  deviceMs: number;
}

/**
 * Stores a batch's results: large outputs to S3 first (the tensor store decides), then every row in one
 * statement. Called before the queue jobs are acknowledged (invariant 2);
 * writing the same results twice leaves the rows as they were.
 */
export function createResultWriter(deps: { pool: Pool; storage: Storage; tensors: TensorStore; workerId: string }) {
  const storeOutputs = (job: JobOutputs, batchId: string) =>
    deps.tensors.putTensors({ jobId: job.id, createdAt: new Date(job.createdAtMs), kind: 'outputs', batchId }, job.outputs);

  return {
    /**
     * Records the batch and its results in one statement; returns the ids
     * whose rows were written: not jobs canceled meanwhile, nor jobs another
     * attempt finished first (this worker's lock had expired).
     */
    async writeSuccesses(batch: NewBatch, run: BatchRun, results: JobOutputs[]): Promise<Set<string>> {
      const stored = await Promise.all(results.map(async (r) => ({ ...r, outputs: await storeOutputs(r, batch.id) })));
      const written = await completeJobs(deps.pool, run, stored, batch);
      // Refused outputs no row names (a retry of this very write finds its rows already written and keeps them) go now;
      // a failed delete is left to the API's orphan sweep, never failing the batch.
      const refused = stored.filter((r) => !written.has(r.id)).flatMap((r) => deps.tensors.objectKeys(r.outputs).map((key) => ({ key, jobId: r.id })));
      if (refused.length > 0) {
        await findUnnamedJobObjects(deps.pool, refused, { keepUnfinished: false })
          .then((keys) => deps.storage.deleteObjects(keys))
          .catch(() => {});
      }
      return written;
    },
    /** Records failures; with `run`, fenced to the batch's attempts and with its provenance (failJobs). */
    writeFailures: (failures: JobFailure[], run?: BatchRun) => failJobs(deps.pool, failures, run),
    /** Undoes a batch's claim on jobs this worker gives back (a fault of its own), recording the fault on each. */
    releaseJobs: (batchId: string, jobs: Array<JobClaim & { code: string; message: string }>) => releaseJobs(deps.pool, batchId, deps.workerId, jobs),
  };
}
export type ResultWriter = ReturnType<typeof createResultWriter>;
