import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeTensorBase64, type StoredTensor } from '@inferq/contracts';
import { createLogger } from '@inferq/core';
import { completeJobs, failJobs, markJobsRunning, recordWebhookAttempts, startJobs } from '@inferq/db';
import { createRedisConnection, releaseLease, takeLease, type RedisClient } from '@inferq/queue';
import { jobOutputKey } from '@inferq/storage';
import { testBatchRun } from '@inferq/test-utils';
import { createRetentionSweeper, RETENTION_PASS } from '../src/background/retention-sweeper.ts';
import { buildTestApp, demoModelBytes, mlpInput, type TestApp } from './helpers.ts';

// Retention (issue 17): purge to tombstones (DELETE and the sweep), input drop,
// objects shared by response-cache hits, 410 on every read, accounting kept.

/** Below the 256 bytes of one MLP row: every input goes to S3. */
const INLINE_TENSOR_MAX_BYTES = 100;
const DAY_S = 24 * 3600;

let t: TestApp;
let redis: RedisClient;
beforeAll(async () => {
  t = await buildTestApp({ inlineTensorMaxBytes: INLINE_TENSOR_MAX_BYTES });
  redis = createRedisConnection(t.ctx.env.REDIS_URL!, 'producer');
  const mlp = await demoModelBytes('mlp');
  for (const name of ['mlp', 'shortlived', 'longlived']) expect((await t.registerModel(name, mlp)).statusCode).toBe(201);
  expect((await t.registerModel('cached', mlp, { responseCache: 'true' })).statusCode).toBe(201);
});
afterAll(async () => {
  await redis.quit();
  await t.close();
});

const request = (method: string, url: string, key = t.userKey, payload?: object) =>
  t.server.inject({ method: method as 'GET', url, headers: t.auth(key), ...(payload && { payload }) });
const keyIdOf = async (key: string): Promise<string> => (await request('GET', '/v1/me', key)).json().keyId;
const exists = async (key: string) => (await t.ctx.storage.headObject(key)) !== undefined;

async function submit(body: object, key = t.userKey): Promise<string> {
  const res = await request('POST', '/v1/jobs', key, { model: 'mlp', inputs: [mlpInput(1, Math.random())], ...body });
  expect(res.statusCode, res.body).toBe(202);
  return res.json().id;
}

/** Plays the worker: the job succeeds with one output, in S3 unless `inline`. Returns the output's key. */
async function succeed(id: string, { inline = false } = {}): Promise<string | undefined> {
  const batchId = randomUUID();
  expect((await startJobs(t.ctx.pool, { ids: [id], workerId: 'w-test', batchId, batchSize: 1 })).size).toBe(1);
  const head = { name: 'logits', datatype: 'FP32' as const, shape: [1, 16], bytes: 64 };
  let output: StoredTensor;
  if (inline) output = { ...head, b64: encodeTensorBase64(new Uint8Array(64)) };
  else {
    output = { ...head, key: jobOutputKey(id, new Date(), batchId, 0) };
    await t.ctx.storage.putObject(output.key!, new Uint8Array(64));
  }
  await completeJobs(t.ctx.pool, testBatchRun(batchId), [{ attempt: 1, id, inferMs: 2, items: 1, deviceMs: 2, outputs: [output] }]);
  return output.key;
}

const rowOf = async (id: string) => (await t.ctx.pool.query('SELECT * FROM jobs WHERE id = $1', [id])).rows[0];
const inputKeysOf = async (id: string): Promise<string[]> => (await rowOf(id)).inputs.map((i: StoredTensor) => i.key).filter(Boolean);
/** Moves a job's finish (and start and creation) this many seconds into the past. */
const finishedAgo = (id: string, seconds: number) =>
  t.ctx.pool.query(
    `UPDATE jobs SET finished_at = now() - $2 * interval '1 second', started_at = now() - $2 * interval '1 second',
                     created_at = now() - $2 * interval '1 second' WHERE id = $1`,
    [id, seconds],
  );

function sweeper(settings: { jobRetentionS: number; inputRetentionS: number; batchSize?: number; budgetMs?: number; onSwept?(behind: boolean): void }) {
  return createRetentionSweeper({
    pool: t.ctx.pool,
    redis,
    prefix: t.producer.prefix,
    retention: t.retention,
    logger: createLogger({ service: 'retention-test', level: 'warn', pretty: false }),
    intervalMs: 60_000,
    ...settings,
  });
}
/** A sweep that touches only jobs backdated past these (every job of this file finishes now unless moved). */
const LONG = { jobRetentionS: 1_000_000_000, inputRetentionS: 1_000_000_000 };

async function expectGone(res: { statusCode: number; json(): any }, code = 'JOB_PURGED') {
  expect(res.statusCode).toBe(410);
  expect(res.json().code).toBe(code);
}

describe('DELETE /v1/jobs/:id', () => {
  it('purges a finished job to a tombstone, deletes its objects and answers 410 on every read of its data', async () => {
    const id = await submit({ metadata: { team: 'search' }, webhook: { url: 'http://127.0.0.1:9/hook' } });
    const outputKey = (await succeed(id))!;
    const inputKeys = await inputKeysOf(id);
    expect(inputKeys).toHaveLength(1);
    expect(await exists(outputKey)).toBe(true);
    expect(await exists(inputKeys[0]!)).toBe(true);
    await recordWebhookAttempts(t.ctx.pool, [
      { id: randomUUID(), jobId: id, attempt: 1, url: 'http://127.0.0.1:9/hook', statusCode: 500, error: null, durationMs: 3, outcome: { state: 'given_up' } },
    ]);
    const before = (await request('GET', `/v1/jobs/${id}`)).json();

    const res = await request('DELETE', `/v1/jobs/${id}`);
    expect(res.statusCode, res.body).toBe(200);
    const tombstone = res.json();
    expect(tombstone).toMatchObject({
      id,
      status: 'succeeded',
      model: 'mlp',
      modelVersion: 1,
      metadata: {},
      webhookUrl: null,
      purgeReason: 'deleted',
      batchId: before.batchId,
      workerId: 'w-test',
      deviceMs: 2,
      items: 1,
      createdAt: before.createdAt,
      finishedAt: before.finishedAt,
    });
    expect(Date.parse(tombstone.purgedAt)).toBeGreaterThan(0);
    expect(tombstone.inputs).toBeUndefined();
    expect(await exists(outputKey)).toBe(false);
    expect(await exists(inputKeys[0]!)).toBe(false);
    expect((await t.ctx.pool.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE job_id = $1', [id])).rows[0].n).toBe(0);

    const gone = await request('GET', `/v1/jobs/${id}`);
    await expectGone(gone);
    expect(gone.headers['content-type']).toContain('application/problem+json');
    expect(gone.json()).toMatchObject({ purgedAt: tombstone.purgedAt, purgeReason: 'deleted', job: { id, status: 'succeeded', metadata: {} } });
    for (const url of [`/v1/jobs/${id}/inputs/0`, `/v1/jobs/${id}/outputs/0`, `/v1/jobs/${id}/events`, `/v1/jobs/${id}/webhook-deliveries`]) {
      await expectGone(await request('GET', url));
    }
    await expectGone(await request('POST', `/v1/jobs/${id}/retry`));
    await expectGone(await request('POST', `/v1/jobs/${id}/cancel`));

    // Lists still show it, as a tombstone.
    const listed = (await request('GET', `/v1/jobs?id=${id}`)).json().items;
    expect(listed).toEqual([expect.objectContaining({ id, purgedAt: tombstone.purgedAt, purgeReason: 'deleted', metadata: {} })]);
    // Deleting again answers the tombstone and audits nothing more.
    const again = await request('DELETE', `/v1/jobs/${id}`);
    expect(again.statusCode).toBe(200);
    expect(again.json().purgedAt).toBe(tombstone.purgedAt);
    const audit = (await request('GET', '/v1/audit?limit=500', t.adminKey)).json().items.filter((e: { resource: string }) => e.resource === `jobs/${id}`);
    expect(audit).toEqual([
      expect.objectContaining({
        action: 'job:deleted',
        actorKeyId: await keyIdOf(t.userKey),
        details: expect.objectContaining({ model: 'mlp', status: 'succeeded', objectsDeleted: 2 }),
      }),
    ]);
    const metrics = (await t.server.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/inferq_jobs_purged_total\{reason="deleted"\} [1-9]/);
  });

  it("answers 404 to another key, lets an admin delete anyone's job, and needs jobs:write", async () => {
    const id = await submit({});
    await succeed(id, { inline: true });
    const other = await t.newKey();
    expect((await request('DELETE', `/v1/jobs/${id}`, other)).json().code).toBe('JOB_NOT_FOUND');
    const readOnly = await t.newKey({ scopes: ['jobs:read'] });
    expect((await request('DELETE', `/v1/jobs/${id}`, readOnly)).statusCode).toBe(403);
    expect((await request('GET', `/v1/jobs/${id}`)).statusCode).toBe(200);
    const res = await request('DELETE', `/v1/jobs/${id}`, t.adminKey);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id, purgeReason: 'deleted' });
    const [entry] = (await request('GET', '/v1/audit?limit=500', t.adminKey)).json().items.filter((e: { resource: string }) => e.resource === `jobs/${id}`);
    expect(entry).toMatchObject({ action: 'job:deleted', actorKeyId: await keyIdOf(t.adminKey), details: { ownerKeyId: await keyIdOf(t.userKey) } });
  });

  it('cancels a queued job through the cancel path (its queue job removed) and then purges it', async () => {
    const backlog = await t.producer.backlog('mlp');
    const id = await submit({});
    expect(await t.producer.backlog('mlp')).toBe(backlog + 1);
    const [inputKey] = await inputKeysOf(id);
    const res = await request('DELETE', `/v1/jobs/${id}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'canceled', purgeReason: 'deleted' });
    expect(await t.producer.backlog('mlp')).toBe(backlog);
    expect(await exists(inputKey!)).toBe(false);
  });

  it('refuses a running job with 409 JOB_RUNNING and Retry-After, and purges it once it has finished', async () => {
    const id = await submit({});
    // Claimed by a batch that has run long enough to write its claim.
    const batchId = randomUUID();
    const claim = await startJobs(t.ctx.pool, { ids: [id], workerId: 'w', batchId, batchSize: 1 });
    expect(await markJobsRunning(t.ctx.pool, testBatchRun(batchId, 'w'), [{ id, attempt: claim.get(id)!.attempt }])).toEqual(new Set([id]));
    const res = await request('DELETE', `/v1/jobs/${id}`);
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('JOB_RUNNING');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect((await request('GET', `/v1/jobs/${id}`)).json().status).toBe('running');
    await failJobs(t.ctx.pool, [{ id, code: 'INFERENCE_FAILED', message: 'secret user text in the error', final: true }]);
    const done = await request('DELETE', `/v1/jobs/${id}`);
    expect(done.json()).toMatchObject({ status: 'failed', error: { code: 'INFERENCE_FAILED', message: '' } });
    expect((await rowOf(id)).error_message).toBeNull();
  });
});

describe('objects shared by response-cache hits', () => {
  it('keeps an object while another unpurged row references it, and deletes it with the last one', async () => {
    const input = mlpInput(1, 77);
    const source = await submit({ model: 'cached', inputs: [input] });
    const outputKey = (await succeed(source))!;
    const [inputKey] = await inputKeysOf(source);
    const hitRes = await request('POST', '/v1/jobs', t.userKey, { model: 'cached', inputs: [input] });
    expect(hitRes.json().status).toBe('succeeded');
    const hit = hitRes.json().id;
    // A hit of a hit shares the same objects too.
    const second = (await request('POST', '/v1/jobs', t.userKey, { model: 'cached', inputs: [input] })).json().id;
    expect(await inputKeysOf(hit)).toEqual([inputKey]);

    expect((await request('DELETE', `/v1/jobs/${source}`)).statusCode).toBe(200);
    expect(await exists(outputKey)).toBe(true);
    expect(await exists(inputKey!)).toBe(true);
    const download = await request('GET', `/v1/jobs/${hit}/outputs/0`);
    expect(download.statusCode).toBe(200);
    expect(download.rawPayload.byteLength).toBe(64);
    expect((await request('GET', `/v1/jobs/${hit}/inputs/0`)).statusCode).toBe(200);

    // A purged job answers no cache lookup; the hits still do.
    const third = (await request('POST', '/v1/jobs', t.userKey, { model: 'cached', inputs: [input] })).json();
    expect(third.status).toBe('succeeded');
    const remaining = [hit, second, third.id];
    // Purging all of them but one in one call keeps the objects; the last one takes them.
    const last = remaining.pop()!;
    const some = await t.retention.purge(remaining, 'retention');
    expect(some.ids.sort()).toEqual([...remaining].sort());
    expect(some.keys).toEqual([]);
    expect(await exists(outputKey)).toBe(true);
    const all = await t.retention.purge([last], 'retention');
    expect(all.keys.sort()).toEqual([inputKey, outputKey].sort());
    expect(await exists(outputKey)).toBe(false);
    expect(await exists(inputKey!)).toBe(false);
  });

  it('keeps the input objects a hit shares when the source drops its inputs; a hit after the drop has none, unless it keeps its own', async () => {
    const input = mlpInput(1, 88);
    const source = await submit({ model: 'cached', inputs: [input] });
    await succeed(source);
    const [inputKey] = await inputKeysOf(source);
    const hit = (await request('POST', '/v1/jobs', t.userKey, { model: 'cached', inputs: [input] })).json().id;
    const dropped = await t.retention.dropInputs([source]);
    expect(dropped).toEqual({ ids: [source], keys: [], segments: [] });
    expect(await exists(inputKey!)).toBe(true);
    await expectGone(await request('GET', `/v1/jobs/${source}/inputs/0`), 'JOB_INPUTS_DROPPED');
    expect((await request('GET', `/v1/jobs/${hit}/inputs/0`)).statusCode).toBe(200);

    // The newest succeeded job is the source of the next hit: the hit, whose inputs are still there.
    await t.retention.dropInputs([hit]);
    expect(await exists(inputKey!)).toBe(false);
    const late = (await request('POST', '/v1/jobs', t.userKey, { model: 'cached', inputs: [input] })).json();
    expect(late.status).toBe('succeeded');
    const lateJob = (await request('GET', `/v1/jobs/${late.id}`)).json();
    expect(lateJob.inputs).toEqual([]);
    expect(lateJob.inputsDroppedAt).toEqual(expect.any(String));
    const kept = (await request('POST', '/v1/jobs', t.userKey, { model: 'cached', inputs: [input], keepInputs: true })).json();
    expect(kept.status).toBe('succeeded');
    const keptInput = await request('GET', `/v1/jobs/${kept.id}/inputs/0`);
    expect(keptInput.statusCode).toBe(200);
    expect(new Float32Array(new Uint8Array(keptInput.rawPayload).buffer)[0]).toBeCloseTo(input.data[0]!, 5);
  });
});

describe('the retention sweep', () => {
  it('drops inputs of succeeded jobs past the input retention unless the job keeps them, and leaves outputs; a failed job keeps them for a retry', async () => {
    const plain = await submit({});
    const keep = await submit({ keepInputs: true });
    const fresh = await submit({});
    const failed = await submit({});
    for (const id of [plain, keep, fresh]) await succeed(id, { inline: true });
    await t.ctx.pool.query("UPDATE jobs SET status = 'failed', finished_at = now(), error_code = 'INFERENCE_FAILED' WHERE id = $1", [failed]);
    expect((await request('GET', `/v1/jobs/${keep}`)).json().keepInputs).toBe(true);
    const [plainKey] = await inputKeysOf(plain);
    await finishedAgo(plain, 1.5 * DAY_S);
    await finishedAgo(keep, 1.5 * DAY_S);
    await finishedAgo(failed, 1.5 * DAY_S);

    const result = await sweeper({ ...LONG, inputRetentionS: DAY_S }).sweepOnce();
    expect(result).toMatchObject({ purged: 0, inputsDropped: 1, objectsDeleted: 1 });
    expect(await exists(plainKey!)).toBe(false);
    await expectGone(await request('GET', `/v1/jobs/${plain}/inputs/0`), 'JOB_INPUTS_DROPPED');
    const retry = await request('POST', `/v1/jobs/${plain}/retry`);
    expect(retry.json()).toMatchObject({ code: 'JOB_INPUTS_DROPPED', inputsDroppedAt: expect.any(String) });
    const job = (await request('GET', `/v1/jobs/${plain}`)).json();
    expect(job).toMatchObject({ inputs: [], inputsDroppedAt: expect.any(String), outputs: [expect.objectContaining({ name: 'logits' })] });
    expect((await request('GET', `/v1/jobs/${keep}/inputs/0`)).statusCode).toBe(200);
    expect((await request('GET', `/v1/jobs/${fresh}/inputs/0`)).statusCode).toBe(200);
    expect((await request('GET', `/v1/jobs/${failed}/inputs/0`)).statusCode).toBe(200);
    expect((await request('POST', `/v1/jobs/${failed}/retry`)).statusCode).not.toBe(410);
    const metrics = (await t.server.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/inferq_job_inputs_dropped_total [1-9]/);
  });

  it("holds each job to its model's retention, else its key's, else the default; a job owing a webhook waits for it", async () => {
    const [keyShort, keyLong, keyPlain] = [await t.newKey(), await t.newKey(), await t.newKey()];
    const patchKey = async (key: string, retentionS: number | null) => request('PATCH', `/v1/keys/${await keyIdOf(key)}`, t.adminKey, { retentionS });
    expect((await patchKey(keyShort, 600)).json()).toMatchObject({ retentionS: 600 });
    expect((await patchKey(keyLong, 10 * DAY_S)).statusCode).toBe(200);
    expect((await request('PATCH', '/v1/models/shortlived', t.adminKey, { retentionS: 300 })).json()).toMatchObject({ name: 'shortlived', retentionS: 300 });
    expect((await request('PATCH', '/v1/models/longlived', t.adminKey, { retentionS: 10 * DAY_S })).statusCode).toBe(200);

    const job = async (key: string, model: string, agoS: number, body: object = {}) => {
      const id = await submit({ model, ...body }, key);
      await succeed(id, { inline: true });
      await finishedAgo(id, agoS);
      return id;
    };
    const expected = {
      byKey: [await job(keyShort, 'mlp', 900), true],
      withinKey: [await job(keyShort, 'mlp', 300), false],
      modelBeatsLongKey: [await job(keyLong, 'shortlived', 400), true],
      modelBeatsShortKey: [await job(keyShort, 'longlived', 2 * DAY_S), false],
      byDefault: [await job(keyPlain, 'mlp', 3 * DAY_S), true],
      withinDefault: [await job(keyPlain, 'mlp', DAY_S), false],
      longKeyPastDefault: [await job(keyLong, 'mlp', 3 * DAY_S), false],
      owesWebhook: [await job(keyPlain, 'mlp', 3 * DAY_S, { webhook: { url: 'http://127.0.0.1:9/hook' } }), false],
    } as const;

    const result = await sweeper({ ...LONG, jobRetentionS: 2 * DAY_S }).sweepOnce();
    expect(result?.purged).toBe(3);
    for (const [what, [id, purged]] of Object.entries(expected)) {
      expect((await request('GET', `/v1/jobs/${id}`, t.adminKey)).statusCode, what).toBe(purged ? 410 : 200);
    }
    const [purgedRow] = (await t.ctx.pool.query('SELECT purge_reason FROM jobs WHERE id = $1', [expected.byKey[0]])).rows;
    expect(purgedRow.purge_reason).toBe('retention');
    // Once its webhook is given up, the job is purged too; clearing the model's retention puts its jobs back on the key's.
    await t.ctx.pool.query("UPDATE jobs SET webhook_state = 'given_up' WHERE id = $1", [expected.owesWebhook[0]]);
    expect((await request('PATCH', '/v1/models/longlived', t.adminKey, { retentionS: null })).json()).toMatchObject({ retentionS: null });
    expect((await sweeper({ ...LONG, jobRetentionS: 2 * DAY_S }).sweepOnce())?.purged).toBe(2);
    expect((await request('GET', `/v1/jobs/${expected.modelBeatsShortKey[0]}`, t.adminKey)).statusCode).toBe(410);
    const metrics = (await t.server.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/inferq_jobs_purged_total\{reason="retention"\} [1-9]/);
  });

  it('works batches until none is left, however many, and stops on its time budget saying it is behind', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const id = await submit({});
      await succeed(id, { inline: true });
      await finishedAgo(id, 3 * DAY_S);
      ids.push(id);
    }
    const told: boolean[] = [];
    const settings = { ...LONG, jobRetentionS: 2 * DAY_S, batchSize: 2, onSwept: (behind: boolean) => told.push(behind) };
    // No time at all: one full batch, then out of time with rows still due.
    expect(await sweeper({ ...settings, budgetMs: 0 }).sweepOnce()).toMatchObject({ purged: 2, behind: true });
    // Time enough: every batch (three more, the last one short), where a fixed count of batches would stop.
    expect(await sweeper(settings).sweepOnce()).toMatchObject({ purged: 5, behind: false });
    expect(told).toEqual([true, false]);
    for (const id of ids) expect((await request('GET', `/v1/jobs/${id}`, t.adminKey)).statusCode).toBe(410);
  });

  it('is one replica at a time: a sweep skips while another holds the lease', async () => {
    expect(await takeLease(redis, t.producer.prefix, RETENTION_PASS, 60_000)).toBe(true);
    try {
      expect(await sweeper(LONG).sweepOnce()).toBeUndefined();
    } finally {
      await releaseLease(redis, t.producer.prefix, RETENTION_PASS);
    }
    expect(await sweeper(LONG).sweepOnce()).toEqual({ purged: 0, inputsDropped: 0, objectsDeleted: 0, behind: false });
  });
});

describe('settings and accounting', () => {
  it('validates retention settings and audits them', async () => {
    const keyId = await keyIdOf(t.userKey);
    for (const retentionS of [59, 1.5, 'x', 2_000_000_001]) {
      expect((await request('PATCH', `/v1/keys/${keyId}`, t.adminKey, { retentionS })).statusCode, String(retentionS)).toBe(400);
      expect((await request('PATCH', '/v1/models/mlp', t.adminKey, { retentionS })).statusCode, String(retentionS)).toBe(400);
    }
    expect((await request('PATCH', `/v1/keys/${keyId}`, t.adminKey, {})).statusCode).toBe(400);
    expect((await request('PATCH', `/v1/keys/${keyId}`, t.userKey, { retentionS: 60 })).statusCode).toBe(403);
    expect((await request('PATCH', `/v1/keys/${randomUUID()}`, t.adminKey, { retentionS: 60 })).statusCode).toBe(404);
    expect((await request('PATCH', '/v1/models/nope', t.adminKey, { retentionS: 60 })).json().code).toBe('MODEL_NOT_FOUND');
    expect((await request('PATCH', '/v1/models/mlp', t.userKey, { retentionS: 60 })).statusCode).toBe(403);
    expect((await request('GET', '/v1/keys', t.adminKey)).json().items.find((k: { id: string }) => k.id === keyId).retentionS).toBeNull();
    const actions = (await request('GET', '/v1/audit?limit=500', t.adminKey)).json().items.map((e: { action: string }) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['key:updated', 'model:retention-set']));
  });

  it('counts tombstones in usage and stats: device time stays', async () => {
    // A fixed range that holds the job whatever the clocks say.
    const range = `from=${new Date(Date.now() - 3_600_000).toISOString()}&to=${new Date(Date.now() + 3_600_000).toISOString()}`;
    const usage = async () => (await request('GET', `/v1/usage?groupBy=model&${range}`, t.adminKey)).json();
    const stats = async () => (await request('GET', '/v1/stats', t.adminKey)).json();
    const id = await submit({});
    await succeed(id, { inline: true });
    const [usageBefore, statsBefore] = [await usage(), await stats()];
    expect((await request('DELETE', `/v1/jobs/${id}`)).statusCode).toBe(200);
    const [usageAfter, statsAfter] = [await usage(), await stats()];
    expect(usageBefore.total.jobs).toBeGreaterThan(0);
    expect(usageAfter.items).toEqual(usageBefore.items);
    expect(usageAfter.total).toEqual(usageBefore.total);
    expect(statsAfter.models).toEqual(statsBefore.models);
  });
});
