import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredTensor } from '@inferq/contracts';
import { createLogger } from '@inferq/core';
import { completeJobs, dropInputs, insertCachedJob, insertJobs, startJobs } from '@inferq/db';
import { createRedisConnection, releaseLease, takeLease, type RedisClient } from '@inferq/queue';
import { createTensorStore, inputSegmentKey, jobInputKey, jobOutputKey } from '@inferq/storage';
import { newTestJob, testBatchRun } from '@inferq/test-utils';
import { createOrphanSweeper, ORPHAN_PASS } from '../src/background/orphan-sweeper.ts';
import { buildTestApp, demoModelBytes, mlpInput, type TestApp } from './helpers.ts';

// The orphaned-object sweep (issue 17): objects under an old day that no row
// names go; objects a live row or a live response-cache hit names stay, and so
// does everything of a job still queued or running.

/** Below the 256 bytes of one MLP row: every input goes to S3. */
const INLINE_TENSOR_MAX_BYTES = 100;
/** A day long past every retention: objects are filed under it by hand. */
const OLD_DAY = new Date('2020-01-15T12:00:00Z');
const HEAD = { name: 'logits', datatype: 'FP32' as const, shape: [1, 16], bytes: 64 };

let t: TestApp;
let redis: RedisClient;
beforeAll(async () => {
  t = await buildTestApp({ inlineTensorMaxBytes: INLINE_TENSOR_MAX_BYTES });
  redis = createRedisConnection(t.ctx.env.REDIS_URL!, 'producer');
  const mlp = await demoModelBytes('mlp');
  expect((await t.registerModel('mlp', mlp)).statusCode).toBe(201);
  expect((await t.registerModel('cached', mlp, { responseCache: 'true' })).statusCode).toBe(201);
});
afterAll(async () => {
  await redis.quit();
  await t.close();
});

const request = (method: string, url: string, payload?: object) =>
  t.server.inject({ method: method as 'GET', url, headers: t.auth(t.userKey), ...(payload && { payload }) });
const exists = async (key: string) => (await t.ctx.storage.headObject(key)) !== undefined;
const put = (key: string) => t.ctx.storage.putObject(key, new Uint8Array(64));

async function submit(model = 'mlp', seed = Math.random()): Promise<string> {
  const res = await request('POST', '/v1/jobs', { model, inputs: [mlpInput(1, seed)] });
  expect(res.statusCode, res.body).toBe(202);
  return res.json().id;
}

/** Plays the worker: the job runs in a new batch; with `finish`, it succeeds with one output filed under OLD_DAY. */
async function run(id: string, { finish = true } = {}): Promise<{ batchId: string; outputKey: string }> {
  const batchId = randomUUID();
  expect((await startJobs(t.ctx.pool, { ids: [id], workerId: 'w-test', batchId, batchSize: 1 })).size).toBe(1);
  const outputKey = jobOutputKey(id, OLD_DAY, batchId, 0);
  await put(outputKey);
  if (finish) {
    const output: StoredTensor = { ...HEAD, key: outputKey };
    expect((await completeJobs(t.ctx.pool, testBatchRun(batchId), [{ attempt: 1, id, inferMs: 1, items: 1, deviceMs: 1, outputs: [output] }])).size).toBe(1);
  }
  return { batchId, outputKey };
}

function sweeper(maxObjectsPerPass = 1_000, minAgeS = 86_400) {
  return createOrphanSweeper({
    pool: t.ctx.pool,
    redis,
    prefix: t.producer.prefix,
    storage: t.ctx.storage,
    logger: createLogger({ service: 'orphans-test', level: 'warn', pretty: false }),
    intervalMs: 60_000,
    maxObjectsPerPass,
    minAgeS,
    onDeleted: t.metrics.jobOrphanedObjectsDeleted,
  });
}

describe('the orphan sweep', () => {
  it('deletes objects no row names and keeps what a live job, a running job or a live cache hit names', async () => {
    // A job whose output stands, beside the output of an attempt fenced out.
    const done = await submit();
    const { outputKey: named } = await run(done);
    const fenced = jobOutputKey(done, OLD_DAY, randomUUID(), 0);
    await put(fenced);
    // A submit whose insert failed: inputs, no row.
    const neverInserted = jobInputKey(randomUUID(), OLD_DAY, 0);
    await put(neverInserted);
    // A running job's output, stored before its row names it.
    const running = await submit();
    const { outputKey: inFlight } = await run(running, { finish: false });
    // A purged job's object a failed delete left behind.
    const purged = await submit();
    await run(purged);
    expect((await request('DELETE', `/v1/jobs/${purged}`)).statusCode).toBe(200);
    const leftOver = jobInputKey(purged, OLD_DAY, 0);
    await put(leftOver);
    // A source purged while a cache hit still names its output; the hit is what keeps it.
    const source = await submit('cached', 4242);
    const { outputKey: shared } = await run(source);
    const hit = await request('POST', '/v1/jobs', { model: 'cached', inputs: [mlpInput(1, 4242)] });
    expect(hit.json().status).toBe('succeeded');
    expect((await request('DELETE', `/v1/jobs/${source}`)).statusCode).toBe(200);
    expect(await exists(shared)).toBe(true);
    // Not a job object's key: left to the bucket's expiry rule.
    const foreign = 'jobs/2020-01-15/not-a-job/inputs/0.bin';
    await put(foreign);
    // Today's objects are younger than the sweep looks.
    const today = jobInputKey(randomUUID(), new Date(), 0);
    await put(today);

    const result = await sweeper().sweepOnce();
    expect(result).toEqual({ examined: 7, deleted: 3, wrapped: true });
    for (const key of [fenced, neverInserted, leftOver]) expect(await exists(key), key).toBe(false);
    for (const key of [named, inFlight, shared, foreign, today]) expect(await exists(key), key).toBe(true);
    expect((await request('GET', `/v1/jobs/${hit.json().id}/outputs/0`)).statusCode).toBe(200);

    // Once the hit is purged too, its purge deletes the shared object itself.
    expect((await request('DELETE', `/v1/jobs/${hit.json().id}`)).statusCode).toBe(200);
    expect(await exists(shared)).toBe(false);
  });

  it('works through the old days a bounded number of objects per pass, going on where the last pass stopped', async () => {
    const orphans = Array.from({ length: 5 }, () => jobInputKey(randomUUID(), new Date('2020-02-01T00:00:00Z'), 0));
    await Promise.all(orphans.map(put));
    const sweep = sweeper(3);
    const passes = [];
    for (let i = 0; i < 10; i++) {
      const pass = (await sweep.sweepOnce())!;
      passes.push(pass);
      if (pass.wrapped) break;
    }
    expect(passes.every((p) => p.examined <= 3)).toBe(true);
    expect(passes.at(-1)!.wrapped).toBe(true);
    expect(passes.slice(0, -1).every((p) => !p.wrapped)).toBe(true);
    for (const key of orphans) expect(await exists(key)).toBe(false);
    const metrics = (await t.server.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/inferq_job_orphaned_objects_deleted_total [1-9]/);
  });

  it('deletes an input segment with the last row that names it: a drop or a purge of its group, a cache hit, else the sweep', async () => {
    const owner = (await t.ctx.pool.query<{ id: string }>(`SELECT id FROM api_keys WHERE name = 'user'`)).rows[0]!.id;
    const store = createTensorStore({ storage: t.ctx.storage, inlineMaxBytes: 1024 });
    /** A group of `n` jobs (ids made, rows inserted unless `insert` is false) whose inputs share one segment. */
    const group = async (n: number, over: Parameters<typeof newTestJob>[1] = {}, insert = true) => {
      const jobs = Array.from({ length: n }, () => newTestJob(owner, over));
      const data = new Uint8Array(256).fill(7);
      const inputs = await store.segmentInputs(
        jobs.map((j) => ({ id: j.id, inputs: [{ name: 'features', datatype: 'FP32' as const, shape: [1, 64], bytes: 256, data }] })),
      );
      const rows = jobs.map((j, i) => ({ ...j, inputs: inputs[i]! }));
      if (insert) await insertJobs(t.ctx.pool, rows);
      const name = inputs[0]![0]!.segment!;
      return { ids: rows.map((r) => r.id), name, key: inputSegmentKey(name) };
    };
    const purge = async (id: string) => expect((await request('DELETE', `/v1/jobs/${id}`)).statusCode).toBe(200);

    // Two jobs of one group: the first one's purge leaves the segment to the second, whose purge deletes it.
    const pair = await group(2);
    for (const id of pair.ids) await run(id);
    await purge(pair.ids[0]!);
    expect(await exists(pair.key)).toBe(true);
    await purge(pair.ids[1]!);
    expect(await exists(pair.key)).toBe(false);

    // A drop of a succeeded job's inputs deletes its segment too.
    const dropped = await group(1);
    await run(dropped.ids[0]!);
    expect((await dropInputs(t.ctx.pool, dropped.ids)).segments).toEqual([dropped.name]);

    // A source's inputs copied by a cache hit: the hit keeps them past the source's purge, and its own purge deletes them.
    const source = await group(1, { modelName: 'cached', inputSha256: 'f'.repeat(64) });
    await run(source.ids[0]!);
    const hit = newTestJob(owner, { modelName: 'cached' });
    expect(await insertCachedJob(t.ctx.pool, { ...hit, inputs: undefined, inputSha256: 'f'.repeat(64) })).toBe(true);
    await purge(source.ids[0]!);
    expect(await exists(source.key)).toBe(true);
    expect((await request('GET', `/v1/jobs/${hit.id}/inputs/0`)).rawPayload).toEqual(Buffer.alloc(256, 7));
    await purge(hit.id);
    expect(await exists(source.key)).toBe(false);

    // The sweep: a segment whose group was never inserted goes, a queued job's stays (the horizon is tomorrow: today's are looked at).
    const [unnamed, queued] = [await group(2, {}, false), await group(1)];
    await sweeper(1_000, -86_400).sweepOnce();
    expect(await exists(unnamed.key)).toBe(false);
    expect(await exists(queued.key)).toBe(true);
  });

  it('is one replica at a time: a pass skips while another holds the lease', async () => {
    const orphan = jobInputKey(randomUUID(), OLD_DAY, 1);
    await put(orphan);
    expect(await takeLease(redis, t.producer.prefix, ORPHAN_PASS, 60_000)).toBe(true);
    expect(await sweeper().sweepOnce()).toBeUndefined();
    expect(await exists(orphan)).toBe(true);
    await releaseLease(redis, t.producer.prefix, ORPHAN_PASS);
    expect((await sweeper().sweepOnce())!.deleted).toBeGreaterThanOrEqual(1);
    expect(await exists(orphan)).toBe(false);
  });
});
