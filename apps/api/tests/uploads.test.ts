import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Upload } from '@inferq/contracts';
import { createLogger } from '@inferq/core';
import { createRedisConnection, QueueNotReadyError, type JobProducer, type RedisClient } from '@inferq/queue';
import { tensorKey, type TensorSlot } from '@inferq/storage';
import { createUploadsSweeper } from '../src/background/uploads-sweeper.ts';
import type { Principal } from '../src/services/keys/api-keys-service.ts';
import { createJobsService } from '../src/services/jobs/jobs-service.ts';
import { createModelsService } from '../src/services/models/models-service.ts';
import { buildTestApp, type TestApp } from './helpers.ts';

// Uploads (POST /v1/uploads): the route, then the claim the submit path makes
// for an input naming an upload, against the test S3 (the presigned PUT is a
// real fetch), then the sweep of expired uploads.

/** The test app keeps tensors up to 16 KiB inline: 8,192 FP32 values are 32 KiB, an S3 object. */
const head = { name: 'x', datatype: 'FP32' as const, shape: [2, 4096] };
const BYTES = 2 * 4096 * 4;

let t: TestApp;
let user: Principal;
let other: Principal;
let redis: RedisClient;
beforeAll(async () => {
  t = await buildTestApp();
  user = (await t.keys.authenticate(t.userKey))!;
  other = (await t.keys.authenticate(await t.newKey()))!;
  redis = createRedisConnection(t.ctx.env.REDIS_URL!, 'producer');
});
afterAll(async () => {
  await redis?.quit();
  await t?.close();
});

async function createUpload(key = t.userKey, body: object = { datatype: head.datatype, shape: head.shape }): Promise<Upload> {
  const res = await t.server.inject({ method: 'POST', url: '/v1/uploads', payload: body, headers: t.auth(key) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

async function putBytes(upload: Upload, bytes: Uint8Array<ArrayBuffer>): Promise<number> {
  const res = await fetch(upload.url, { method: upload.method, headers: { ...upload.headers, 'content-length': String(bytes.byteLength) }, body: bytes });
  await res.arrayBuffer();
  return res.status;
}

const newSlot = (): TensorSlot => ({ jobId: randomUUID(), createdAt: new Date(), kind: 'inputs' });
const codeOf = async (p: Promise<unknown>) => ((await p.then(() => undefined).catch((e: unknown) => e)) as { code?: string } | undefined)?.code;
const expire = (id: string) => t.ctx.pool.query(`UPDATE uploads SET expires_at = now() - interval '1 second' WHERE id = $1`, [id]);

describe('POST /v1/uploads', () => {
  it('answers a presigned PUT of exactly the tensor size, expiring after UPLOAD_TTL_S', async () => {
    const before = Date.now();
    const upload = await createUpload();
    expect(upload).toMatchObject({ method: 'PUT', bytes: BYTES, headers: { 'content-length': String(BYTES), 'content-type': 'application/octet-stream' } });
    expect(new URL(upload.url).pathname).toMatch(new RegExp(`/uploads/\\d{4}-\\d{2}-\\d{2}/${upload.id}\\.bin$`));
    const ttlMs = Date.parse(upload.expiresAt) - before;
    expect(ttlMs).toBeGreaterThan(3_590_000);
    expect(ttlMs).toBeLessThanOrEqual(3_601_000);
  });

  it('needs a key with jobs:write', async () => {
    const body = { datatype: 'FP32', shape: [1] };
    expect((await t.server.inject({ method: 'POST', url: '/v1/uploads', payload: body })).statusCode).toBe(401);
    const reader = await t.newKey({ scopes: ['jobs:read'] });
    const res = await t.server.inject({ method: 'POST', url: '/v1/uploads', payload: body, headers: t.auth(reader) });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('FORBIDDEN');
  });

  it('refuses an unknown datatype, BYTES, a negative or missing shape, extra fields, and a tensor over INPUT_MAX_BYTES', async () => {
    for (const body of [
      { datatype: 'FP128', shape: [1] },
      { datatype: 'FP32', shape: [-1] },
      { datatype: 'FP32' },
      { datatype: 'FP32', shape: [1], data: [1] },
    ]) {
      const res = await t.server.inject({ method: 'POST', url: '/v1/uploads', payload: body, headers: t.auth(t.userKey) });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_FAILED');
    }
    // BYTES has no size known before its strings are: nothing to sign a PUT's length with.
    const strings = await t.server.inject({ method: 'POST', url: '/v1/uploads', payload: { datatype: 'BYTES', shape: [1] }, headers: t.auth(t.userKey) });
    expect(strings.json()).toMatchObject({ status: 400, code: 'DATATYPE_UNSUPPORTED' });
    const big = await t.server.inject({ method: 'POST', url: '/v1/uploads', payload: { datatype: 'FP32', shape: [4096, 4096] }, headers: t.auth(t.userKey) });
    expect(big.statusCode).toBe(413);
    expect(big.json().code).toBe('INPUT_TOO_LARGE');
  });

  it('is in the OpenAPI document with its 201 body', async () => {
    const doc = (await t.server.inject({ method: 'GET', url: '/docs/json' })).json();
    const op = doc.paths['/v1/uploads'].post;
    expect(op.summary).toBeTruthy();
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['201', '400', '401', '403', '413']));
  });
});

describe('claiming an upload for a job input', () => {
  it("moves the uploaded bytes into the job's input key and deletes the upload object", async () => {
    const upload = await createUpload();
    const bytes = new Uint8Array(randomBytes(BYTES));
    expect(await putBytes(upload, bytes)).toBe(200);
    const slot = newSlot();
    const stored = await t.uploads.claim(user, upload.id, slot, 1, head, BYTES);
    expect(stored).toEqual({ ...head, bytes: BYTES, key: tensorKey(slot, 1) });
    expect(await t.tensors.readTensor(stored)).toEqual(bytes);
    const { rows } = await t.ctx.pool.query(`SELECT object_key, claimed_by_job FROM uploads WHERE id = $1`, [upload.id]);
    expect(rows[0].claimed_by_job).toBe(slot.jobId);
    // The upload's object goes once the job is recorded.
    expect(await t.ctx.storage.headObject(rows[0].object_key)).toBeDefined();
    await t.uploads.settle(slot.jobId, true);
    expect(await t.ctx.storage.headObject(rows[0].object_key)).toBeUndefined();
    // Used once.
    expect(await codeOf(t.uploads.claim(user, upload.id, newSlot(), 0, head, BYTES))).toBe('UPLOAD_NOT_FOUND');
  });

  it('is given back, object and all, when the submit that claimed it is not recorded, and the retry uses it', async () => {
    const upload = await createUpload();
    const bytes = new Uint8Array(randomBytes(BYTES));
    expect(await putBytes(upload, bytes)).toBe(200);
    const slot = newSlot();
    await t.uploads.claim(user, upload.id, slot, 0, head, BYTES);
    await t.uploads.settle(slot.jobId, false);
    const retry = newSlot();
    const stored = await t.uploads.claim(user, upload.id, retry, 0, head, BYTES);
    expect(await t.tensors.readTensor(stored)).toEqual(bytes);
    await t.uploads.settle(retry.jobId, true);
    expect(await codeOf(t.uploads.claim(user, upload.id, newSlot(), 0, head, BYTES))).toBe('UPLOAD_NOT_FOUND');
  });

  it('is given back when the submit naming it is refused after the claim (the queue unreachable), so the retry succeeds', async () => {
    expect([201, 409]).toContain((await t.registerModel('mlp')).statusCode);
    const features = { name: 'features', datatype: 'FP32' as const, shape: [1, 64] };
    const upload = await createUpload(t.userKey, { datatype: features.datatype, shape: features.shape });
    const bytes = new Uint8Array(randomBytes(256));
    expect(await putBytes(upload, bytes)).toBe(200);
    const jobsWith = (producer: JobProducer) =>
      createJobsService({
        pool: t.ctx.pool,
        producer,
        tensors: t.tensors,
        models: createModelsService({ pool: t.ctx.pool, storage: t.ctx.storage, cacheTtlMs: 1_000 }),
        limits: { inputMaxBytes: 1024 * 1024, submitGroupMax: 16, queueMaxDepth: 0 },
        webhookAllowPrivate: true,
        uploads: t.uploads,
      });
    const down: JobProducer = { ...t.producer, enqueueJobs: () => Promise.reject(new QueueNotReadyError('reconnecting')) };
    const submission = {
      principal: user,
      model: 'mlp',
      inputs: [{ ...features, upload: upload.id }],
      priority: 'normal' as const,
      metadata: {},
      idempotencyKey: undefined,
    };
    await expect(jobsWith(down).submitJob(submission)).rejects.toMatchObject({ code: 'QUEUE_UNAVAILABLE' });
    const accepted = await jobsWith(t.producer).submitJob(submission);
    const { rows } = await t.ctx.pool.query('SELECT claimed_by_job, object_key FROM uploads WHERE id = $1', [upload.id]);
    expect(rows[0].claimed_by_job).toBe(accepted.id);
    expect(await t.ctx.storage.headObject(rows[0].object_key)).toBeUndefined();
  });

  it('keeps a small upload inline, as any small input is', async () => {
    const small = { name: 'x', datatype: 'UINT8' as const, shape: [3] };
    const upload = await createUpload(t.userKey, { datatype: 'UINT8', shape: [3] });
    expect(await putBytes(upload, new Uint8Array([1, 2, 3]))).toBe(200);
    expect(await t.uploads.claim(user, upload.id, newSlot(), 0, small, 3)).toEqual({ ...small, bytes: 3, data: new Uint8Array([1, 2, 3]) });
  });

  it("is another key's upload: not found, and still the owner's to use", async () => {
    const upload = await createUpload();
    expect(await putBytes(upload, new Uint8Array(BYTES))).toBe(200);
    expect(await codeOf(t.uploads.claim(other, upload.id, newSlot(), 0, head, BYTES))).toBe('UPLOAD_NOT_FOUND');
    expect(await codeOf(t.uploads.claim(user, randomUUID(), newSlot(), 0, head, BYTES))).toBe('UPLOAD_NOT_FOUND');
    expect((await t.uploads.claim(user, upload.id, newSlot(), 0, head, BYTES)).bytes).toBe(BYTES);
  });

  it('refuses an input of another datatype or shape, and an upload not put or not the size it was created for, leaving it usable', async () => {
    const upload = await createUpload();
    expect(await codeOf(t.uploads.claim(user, upload.id, newSlot(), 0, { ...head, shape: [4096, 2] }, BYTES))).toBe('UPLOAD_MISMATCH');
    expect(await codeOf(t.uploads.claim(user, upload.id, newSlot(), 0, { ...head, datatype: 'INT32' }, BYTES))).toBe('UPLOAD_MISMATCH');
    expect(await codeOf(t.uploads.claim(user, upload.id, newSlot(), 0, head, BYTES))).toBe('UPLOAD_INCOMPLETE');
    // S3 and MinIO refuse a PUT of another length than the signed one; the test server takes it, and the claim catches it.
    const status = await putBytes(upload, new Uint8Array(BYTES - 4));
    if (status === 200) expect(await codeOf(t.uploads.claim(user, upload.id, newSlot(), 0, head, BYTES))).toBe('UPLOAD_INCOMPLETE');
    expect(await putBytes(upload, new Uint8Array(BYTES))).toBe(200);
    expect((await t.uploads.claim(user, upload.id, newSlot(), 0, head, BYTES)).bytes).toBe(BYTES);
  });

  it('refuses an expired upload', async () => {
    const upload = await createUpload();
    expect(await putBytes(upload, new Uint8Array(BYTES))).toBe(200);
    await expire(upload.id);
    expect(await codeOf(t.uploads.claim(user, upload.id, newSlot(), 0, head, BYTES))).toBe('UPLOAD_NOT_FOUND');
  });

  it('lets one of two concurrent claims win', async () => {
    const upload = await createUpload();
    expect(await putBytes(upload, new Uint8Array(BYTES))).toBe(200);
    const outcomes = await Promise.allSettled([0, 1, 2].map(() => t.uploads.claim(user, upload.id, newSlot(), 0, head, BYTES)));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    for (const o of outcomes) if (o.status === 'rejected') expect((o.reason as { code: string }).code).toBe('UPLOAD_NOT_FOUND');
  });
});

describe('the upload sweep', () => {
  it('deletes expired uploads, their rows and objects, and counts those no job used', async () => {
    const unused = await createUpload();
    expect(await putBytes(unused, new Uint8Array(BYTES))).toBe(200);
    const used = await createUpload();
    expect(await putBytes(used, new Uint8Array(BYTES))).toBe(200);
    await t.uploads.claim(user, used.id, newSlot(), 0, head, BYTES);
    const live = await createUpload();
    await expire(unused.id);
    await expire(used.id);
    const keyOf = async (id: string) => (await t.ctx.pool.query(`SELECT object_key FROM uploads WHERE id = $1`, [id])).rows[0]?.object_key;
    const unusedKey = await keyOf(unused.id);
    // Earlier tests' expired uploads are swept too: count them in.
    const { rows } = await t.ctx.pool.query(
      `SELECT count(*) FILTER (WHERE claimed_at IS NULL)::int AS unused, count(*)::int AS all FROM uploads WHERE expires_at <= now()`,
    );

    let expiredCount = 0;
    const sweeper = createUploadsSweeper({
      pool: t.ctx.pool,
      redis,
      prefix: t.ctx.prefix,
      storage: t.ctx.storage,
      logger: createLogger({ service: 'api-test', level: 'warn', pretty: false }),
      intervalMs: 60_000,
      onExpired: (n) => (expiredCount += n),
    });
    expect(await sweeper.sweepOnce()).toEqual({ deleted: rows[0].all, unused: rows[0].unused });
    expect(expiredCount).toBe(rows[0].unused);
    expect(await keyOf(unused.id)).toBeUndefined();
    expect(await keyOf(used.id)).toBeUndefined();
    expect(await keyOf(live.id)).toBeDefined();
    expect(await t.ctx.storage.headObject(unusedKey)).toBeUndefined();
    expect(await sweeper.sweepOnce()).toEqual({ deleted: 0, unused: 0 });
  });
});
