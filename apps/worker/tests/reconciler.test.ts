import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisConnection, deleteKeysWithPrefix } from '@inferq/queue';
import { mlpRows, type Stack, startStack, testJobId, waitFor } from '@inferq/test-utils';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
  await stack.registerModel('mlp');
});
afterAll(() => stack?.close());

/** Deletes the stack's Redis keys: all of them, or those under `under` (one queue's, as a Cluster shard that lost its data). */
async function deleteQueueKeys(under = ''): Promise<number> {
  const redis = createRedisConnection(stack.ctx.env.REDIS_URL!, 'consumer');
  try {
    return await deleteKeysWithPrefix(redis, `${stack.ctx.prefix}${under}`);
  } finally {
    redis.disconnect();
  }
}

/** A queued job created an hour ago: outside the incremental window, so only a full pass finds it. */
async function insertOldQueuedJob(seed: number): Promise<string> {
  const {
    rows: [owner],
  } = await stack.ctx.pool.query('SELECT id FROM api_keys LIMIT 1');
  const id = testJobId();
  await stack.ctx.pool.query(
    `INSERT INTO jobs (id, owner_key_id, model_name, model_version, priority, status, inputs, created_at) ` +
      `VALUES ($1, $2, 'mlp', 1, 'low', 'queued', $3, now() - interval '1 hour')`,
    [
      id,
      owner.id,
      JSON.stringify([{ name: 'features', datatype: 'FP32', shape: [1, 64], bytes: 256, b64: Buffer.from(mlpRows(1, seed).buffer).toString('base64') }]),
    ],
  );
  return id;
}

const succeeded = async (id: string) => (await stack.ctx.pool.query('SELECT status FROM jobs WHERE id = $1', [id])).rows[0].status === 'succeeded';

describe('the reconciler (invariant 1: Postgres is the record)', () => {
  it('runs accepted jobs whose queue entries were lost in a Redis flush', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const x = mlpRows(1, i);
      const res = await stack.request('POST', '/v1/jobs', {
        model: 'mlp',
        inputs: [{ name: 'features', datatype: 'FP32', shape: [1, 64], data: Array.from(x) }],
      });
      ids.push(res.json.id);
    }
    expect(await deleteQueueKeys()).toBeGreaterThan(0);
    await stack.startWorker({ RECONCILE_MIN_AGE_MS: '0' });
    await waitFor(
      async () =>
        (await stack.ctx.pool.query("SELECT count(*)::int AS n FROM jobs WHERE status = 'succeeded' AND id = ANY($1)", [ids])).rows[0].n === ids.length,
      { timeoutMs: 30_000, what: 'the flushed jobs to run' },
    );
  });

  it('runs a job recorded in Postgres whose enqueue never happened (a crash between insert and enqueue)', async () => {
    const {
      rows: [owner],
    } = await stack.ctx.pool.query('SELECT id FROM api_keys LIMIT 1');
    const id = testJobId();
    const x = mlpRows(1, 7);
    await stack.ctx.pool.query(
      `INSERT INTO jobs (id, owner_key_id, model_name, model_version, priority, status, inputs) VALUES ($1, $2, 'mlp', 1, 'normal', 'queued', $3)`,
      [id, owner.id, JSON.stringify([{ name: 'features', datatype: 'FP32', shape: [1, 64], bytes: 256, b64: Buffer.from(x.buffer).toString('base64') }])],
    );
    await waitFor(async () => (await stack.ctx.pool.query('SELECT status FROM jobs WHERE id = $1', [id])).rows[0].status === 'succeeded', {
      timeoutMs: 30_000,
      what: 'the orphan job to run',
    });
  });

  it('checks every unfinished job again when Redis loses its data while the worker runs', async () => {
    const id = await insertOldQueuedJob(9);
    expect(await deleteQueueKeys()).toBeGreaterThan(0);
    await waitFor(() => succeeded(id), { timeoutMs: 30_000, what: 'the job to run after the flush' });
  });

  it("checks every unfinished job again when only one model's queue loses its data (a Cluster shard), the rest of Redis kept", async () => {
    const id = await insertOldQueuedJob(11);
    expect(await deleteQueueKeys(':{infer.mlp}')).toBeGreaterThan(0);
    await waitFor(() => succeeded(id), { timeoutMs: 30_000, what: "the job to run after its queue's keys went" });
  });
});
