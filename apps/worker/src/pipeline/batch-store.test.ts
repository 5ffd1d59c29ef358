import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findJob, insertJobs, startJobs, type NewBatch } from '@inferq/db';
import { createTensorStore } from '@inferq/storage';
import { createTestContext, insertTestOwner, newTestJob, type TestContext } from '@inferq/test-utils';
import { createBatchStore, type BatchClaim, type JobOutputs } from './batch-store.ts';

// The batch store over real Postgres and S3: outputs of an attempt whose
// result was fenced out (another batch claimed the job) are deleted at once;
// a retried write of a result that stands keeps its objects.

let ctx: TestContext;
let ownerKeyId: string;
beforeAll(async () => {
  ctx = await createTestContext();
  ownerKeyId = await insertTestOwner(ctx.pool, 'writer-test');
});
afterAll(() => ctx?.close());

/** Bigger than the inline limit below: stored in S3. */
const OUTPUT = { name: 'y', datatype: 'FP32' as const, shape: [1, 16], data: new Uint8Array(64) };

async function runningJob(batchId: string): Promise<JobOutputs> {
  const job = newTestJob(ownerKeyId);
  await insertJobs(ctx.pool, [job]);
  expect((await startJobs(ctx.pool, { ids: [job.id], workerId: 'w', batchId, batchSize: 1 })).size).toBe(1);
  return { id: job.id, attempt: 1, createdAtMs: Date.now(), outputs: [OUTPUT], inferMs: 1, items: 1, deviceMs: 1 };
}

const batchOf = (id: string): NewBatch => ({
  id,
  modelName: 'mlp',
  modelVersion: 1,
  workerId: 'w',
  device: 'cpu',
  provider: 'cpu',
  size: 1,
  items: 1,
  startedAt: new Date(),
  inferMs: 1,
});
const claimOf = (id: string): BatchClaim => ({ id, size: 1, claimedAtMs: performance.now() });
/** Outputs over 16 bytes go to S3. */
const newStore = () =>
  createBatchStore({ pool: ctx.pool, storage: ctx.storage, tensors: createTensorStore({ storage: ctx.storage, inlineMaxBytes: 16 }), workerId: 'w' });
const outputKeyOf = async (id: string): Promise<string> => (await findJob(ctx.pool, id, null))!.outputs![0]!.key!;
const listed = async (jobId: string): Promise<string[]> => {
  const keys: string[] = [];
  for await (const o of ctx.storage.listObjects('jobs/')) if (o.key.includes(jobId)) keys.push(o.key);
  return keys;
};

describe('writeSuccesses', () => {
  it("deletes the outputs it stored for a job another batch claimed meanwhile, and keeps the winner's", async () => {
    const store = newStore();
    const stale = randomUUID();
    const job = await runningJob(stale);
    // The stale worker's lock expired: another batch claimed the job and finished it.
    const winner = randomUUID();
    await ctx.pool.query("UPDATE jobs SET status = 'queued' WHERE id = $1", [job.id]);
    expect((await startJobs(ctx.pool, { ids: [job.id], workerId: 'w2', batchId: winner, batchSize: 1 })).size).toBe(1);
    expect(await store.writeSuccesses(claimOf(winner), batchOf(winner), [job])).toEqual(new Set([job.id]));
    const kept = await outputKeyOf(job.id);

    expect(await store.writeSuccesses(claimOf(stale), batchOf(stale), [job])).toEqual(new Set());
    expect(await listed(job.id)).toEqual([kept]);
  });

  it('keeps the objects when the same write is retried after it stood (its rows already name them)', async () => {
    const store = newStore();
    const batchId = randomUUID();
    const job = await runningJob(batchId);
    expect(await store.writeSuccesses(claimOf(batchId), batchOf(batchId), [job])).toEqual(new Set([job.id]));
    expect(await store.writeSuccesses(claimOf(batchId), batchOf(batchId), [job])).toEqual(new Set());
    expect(await listed(job.id)).toEqual([await outputKeyOf(job.id)]);
  });
});
