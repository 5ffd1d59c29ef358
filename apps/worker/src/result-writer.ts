import { encodeBase64, type RawTensor, type StoredTensor } from '@inferq/contracts';
import { completeJobs, failJobs, recordBatch, type JobFailure, type NewBatch, type Pool } from '@inferq/db';
import { jobOutputKey, type Storage } from '@inferq/storage';

export interface JobOutputs {
  id: string;
  outputs: RawTensor[];
  inferMs: number;
  items: number;
  deviceMs: number;
}

/**
 * Stores a batch's results: large outputs to S3 first, then every row in one
 * statement. Called before the queue jobs are acknowledged (invariant 2);
 * writing the same results twice leaves the rows as they were.
 */
export function createResultWriter(deps: { pool: Pool; storage: Storage; inlineTensorMaxBytes: number }) {
  async function storeOutputs(jobId: string, outputs: RawTensor[]): Promise<StoredTensor[]> {
    return Promise.all(
      outputs.map(async (t, i) => {
        const head = { name: t.name, datatype: t.datatype, shape: t.shape, bytes: t.data.byteLength };
        if (t.data.byteLength <= deps.inlineTensorMaxBytes) return { ...head, b64: encodeBase64(t.data) };
        const key = jobOutputKey(jobId, i);
        await deps.storage.putObject(key, t.data);
        return { ...head, key };
      }),
    );
  }

  return {
    /** Records the batch, then its results; returns the ids whose rows were written (jobs canceled meanwhile are not). */
    async writeSuccesses(batch: NewBatch, results: JobOutputs[]): Promise<Set<string>> {
      const stored = await Promise.all(results.map(async (r) => ({ ...r, outputs: await storeOutputs(r.id, r.outputs) })));
      await recordBatch(deps.pool, batch);
      return completeJobs(deps.pool, stored);
    },
    writeFailures: (failures: JobFailure[]) => failJobs(deps.pool, failures),
  };
}
export type ResultWriter = ReturnType<typeof createResultWriter>;
