import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeTensorBase64, type StoredTensor } from '@inferq/contracts';
import { completeJobs, recordBatch, recordWebhookAttempts, startJobs } from '@inferq/db';
import { createRedisConnection, type RedisClient } from '@inferq/queue';
import { jobOutputKey } from '@inferq/storage';
import { demoModel, publishFakeWorker, testBatchRun } from '@inferq/test-utils';
import { buildTestApp, demoModelBytes, mlpInput, type TestApp } from './helpers.ts';

// Purge of every kind of job (issue 17): inline and S3-sized tensors, a
// response-cache hit and its source in either order, an embeddings job, a job
// with webhook deliveries; every read of a purged job answers 410 JOB_PURGED,
// and the batch that ran it still lists it (its accounting stays). The /v2
// routes read no job by id (infer answers at once), so there is no /v2 read to purge.

/** Below the 256 bytes of one MLP row: every input and output of these jobs goes to S3 unless written inline. */
const INLINE_TENSOR_MAX_BYTES = 100;
const ENCODER = 'encoder';

let t: TestApp;
let redis: RedisClient;
beforeAll(async () => {
  t = await buildTestApp({ inlineTensorMaxBytes: INLINE_TENSOR_MAX_BYTES, waitMaxS: 5 });
  redis = createRedisConnection(t.ctx.env.REDIS_URL!, 'producer');
  const mlp = await demoModelBytes('mlp');
  expect((await t.registerModel('mlp', mlp)).statusCode).toBe(201);
  expect((await t.registerModel('cached', mlp, { responseCache: 'true' })).statusCode).toBe(201);
  const encoder = demoModel('transformer');
  const form = new FormData();
  form.set('name', ENCODER);
  form.set('file', new Blob([await readFile(encoder.path)]), 'encoder.onnx');
  form.set('tokenizer', new Blob([await readFile(encoder.tokenizerPath!)]), 'tokenizer.json');
  const body = new Request('http://upload', { method: 'POST', body: form });
  const registered = await t.server.inject({
    method: 'POST',
    url: '/v1/models',
    payload: Buffer.from(await body.arrayBuffer()),
    headers: { ...t.auth(t.adminKey), 'content-type': body.headers.get('content-type')! },
  });
  expect(registered.statusCode, registered.body).toBe(201);
  // A live worker for the encoder, so /v1/embeddings submits (this file plays its part).
  await publishFakeWorker(redis, t.ctx.prefix, 'w-purge-kinds', [ENCODER]);
});
afterAll(async () => {
  await redis?.quit();
  await t?.close();
});

const request = (method: string, url: string, payload?: object, key = t.userKey) =>
  t.server.inject({ method: method as 'GET', url, headers: t.auth(key), ...(payload && { payload }) });
const exists = async (key: string) => (await t.ctx.storage.headObject(key)) !== undefined;
const rowOf = async (id: string) => (await t.ctx.pool.query('SELECT * FROM jobs WHERE id = $1', [id])).rows[0];
const keysOf = async (id: string): Promise<string[]> => {
  const row = await rowOf(id);
  return [...row.inputs, ...(row.outputs ?? [])].map((x: StoredTensor) => x.key).filter((k): k is string => k !== undefined);
};

async function submit(body: object = {}): Promise<string> {
  const res = await request('POST', '/v1/jobs', { model: 'mlp', inputs: [mlpInput(1, Math.random())], ...body });
  expect(res.statusCode, res.body).toBe(202);
  return res.json().id;
}

/** Plays the worker: the job succeeds in a batch of its own with `outputs` (one 64-byte logits tensor, in S3 unless `inline`). Returns the batch id. */
async function succeed(
  id: string,
  { inline = false, outputs }: { inline?: boolean; outputs?: Array<{ name: string; shape: number[]; bytes: Uint8Array }> } = {},
) {
  const batchId = randomUUID();
  expect((await startJobs(t.ctx.pool, { ids: [id], workerId: 'w-test', batchId, batchSize: 1 })).size).toBe(1);
  const stored: StoredTensor[] = [];
  for (const [i, o] of (outputs ?? [{ name: 'logits', shape: [1, 16], bytes: new Uint8Array(64) }]).entries()) {
    const head = { name: o.name, datatype: 'FP32' as const, shape: o.shape, bytes: o.bytes.byteLength };
    if (inline) {
      stored.push({ ...head, b64: encodeTensorBase64(o.bytes) });
      continue;
    }
    const key = jobOutputKey(id, new Date(), batchId, i);
    await t.ctx.storage.putObject(key, o.bytes);
    stored.push({ ...head, key });
  }
  const { model_name: modelName, model_version: modelVersion } = await rowOf(id);
  await recordBatch(t.ctx.pool, {
    id: batchId,
    modelName,
    modelVersion,
    workerId: 'w-test',
    device: 'cpu',
    provider: 'cpu',
    size: 1,
    items: 1,
    startedAt: new Date(),
    inferMs: 2,
  });
  expect((await completeJobs(t.ctx.pool, testBatchRun(batchId), [{ attempt: 1, id, inferMs: 2, items: 1, deviceMs: 2, outputs: stored }])).size).toBe(1);
  return batchId;
}

/** Every read of a purged job's data answers 410 JOB_PURGED, the job itself with its tombstone. */
async function expectPurgedEverywhere(id: string): Promise<void> {
  const job = await request('GET', `/v1/jobs/${id}`);
  expect(job.statusCode).toBe(410);
  expect(job.json()).toMatchObject({ code: 'JOB_PURGED', job: { id } });
  for (const url of [`/v1/jobs/${id}/inputs/0`, `/v1/jobs/${id}/outputs/0`, `/v1/jobs/${id}/events`, `/v1/jobs/${id}/webhook-deliveries`]) {
    const res = await request('GET', url);
    expect(res.statusCode, url).toBe(410);
    expect(res.json().code, url).toBe('JOB_PURGED');
  }
}

describe('purging every kind of job', () => {
  it('an inline job and an S3-sized one: objects gone, 410 on every read, the batch still lists them with their accounting', async () => {
    const inline = await submit({ inputs: [{ name: 'features', datatype: 'FP32', shape: [1, 64], data: new Array(64).fill(0) }] });
    const inlineBatch = await succeed(inline, { inline: true });
    const large = await submit();
    const largeBatch = await succeed(large);
    const keys = await keysOf(large);
    expect(keys).toHaveLength(2);
    expect(await keysOf(inline)).toHaveLength(1); // 256 input bytes: in S3 even so; its output is inline

    const purged = await t.retention.purge([inline, large], 'retention');
    expect(purged.ids.sort()).toEqual([inline, large].sort());
    for (const key of [...keys, ...(await keysOf(inline))]) expect(await exists(key)).toBe(false);
    for (const [id, batchId] of [
      [inline, inlineBatch],
      [large, largeBatch],
    ] as const) {
      await expectPurgedEverywhere(id);
      expect((await request('GET', `/v1/jobs/${id}`)).json()).toMatchObject({ purgeReason: 'retention', job: { batchId, deviceMs: 2 } });
      const batch = await request('GET', `/v1/inference-batches/${batchId}`, undefined, t.adminKey);
      expect(batch.statusCode, batch.body).toBe(200);
      expect(batch.json().jobs).toEqual([expect.objectContaining({ id, status: 'succeeded', deviceMs: 2 })]);
    }
  });

  it('a job with webhook deliveries: they go with it, the tombstone keeps no URL', async () => {
    const id = await submit({ webhook: { url: 'http://127.0.0.1:9/hook' } });
    await succeed(id);
    await recordWebhookAttempts(t.ctx.pool, [
      { id: randomUUID(), jobId: id, attempt: 1, url: 'http://127.0.0.1:9/hook', statusCode: 200, error: null, durationMs: 3, outcome: { state: 'delivered' } },
    ]);
    expect((await request('GET', `/v1/jobs/${id}/webhook-deliveries`)).json().items).toHaveLength(1);
    expect((await t.retention.purge([id], 'retention')).ids).toEqual([id]);
    expect((await t.ctx.pool.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE job_id = $1', [id])).rows[0].n).toBe(0);
    expect((await rowOf(id)).webhook_url).toBeNull();
    await expectPurgedEverywhere(id);
  });

  it("a cache hit purged first leaves the source's objects; the source purged next takes them; each tombstone answers 410", async () => {
    const input = mlpInput(1, 9191);
    const source = await submit({ model: 'cached', inputs: [input] });
    await succeed(source);
    const shared = await keysOf(source);
    expect(shared).toHaveLength(2);
    const hit = (await request('POST', '/v1/jobs', { model: 'cached', inputs: [input] })).json();
    expect(hit.status).toBe('succeeded');
    expect(await keysOf(hit.id)).toEqual(shared);

    const first = await t.retention.purge([hit.id], 'retention');
    expect(first).toEqual({ ids: [hit.id], keys: [], segments: [] });
    for (const key of shared) expect(await exists(key)).toBe(true);
    await expectPurgedEverywhere(hit.id);
    expect((await request('GET', `/v1/jobs/${hit.id}`)).json().job).toMatchObject({ cacheHit: true, status: 'succeeded' });
    expect((await request('GET', `/v1/jobs/${source}/outputs/0`)).statusCode).toBe(200);
    expect((await request('GET', `/v1/jobs/${source}/inputs/0`)).statusCode).toBe(200);

    const second = await t.retention.purge([source], 'retention');
    expect(second.keys.sort()).toEqual([...shared].sort());
    for (const key of shared) expect(await exists(key)).toBe(false);
    await expectPurgedEverywhere(source);
    // The hit's tombstone is untouched by its source's purge.
    expect((await request('GET', `/v1/jobs/${hit.id}`)).json().job).toMatchObject({ id: hit.id, cacheHit: true });
  });

  it('an embeddings job (/v1/embeddings): its tensors go and its reads answer 410', async () => {
    const embedding = request('POST', '/v1/embeddings', { model: ENCODER, input: 'hello world' });
    // Plays the worker: the job the request submitted succeeds with a last_hidden_state of [1, tokens, 64].
    let job: { id: string; inputs: StoredTensor[] } | undefined;
    for (let i = 0; i < 100 && !job; i++) {
      job = (await t.ctx.pool.query("SELECT id, inputs FROM jobs WHERE model_name = $1 AND status = 'queued'", [ENCODER])).rows[0];
      if (!job) await new Promise((r) => setTimeout(r, 20));
    }
    expect(job).toBeDefined();
    const tokens = job!.inputs[0]!.shape[1]!;
    await succeed(job!.id, { outputs: [{ name: 'last_hidden_state', shape: [1, tokens, 64], bytes: new Uint8Array(tokens * 64 * 4) }] });
    const res = await embedding;
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data[0].embedding).toHaveLength(64);
    const keys = await keysOf(job!.id);
    expect(keys.length).toBeGreaterThan(0);

    expect((await request('DELETE', `/v1/jobs/${job!.id}`)).statusCode).toBe(200);
    for (const key of keys) expect(await exists(key)).toBe(false);
    await expectPurgedEverywhere(job!.id);
  });
});
