import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisConnection, publishWorkerStatus, type RedisClient } from '@inferq/queue';
import { fakeWorkerStatus } from '@inferq/test-utils';
import { buildTestApp, mlpInput, type TestApp } from './helpers.ts';

let t: TestApp;
let redis: RedisClient;
let consoleDir: string;
beforeAll(async () => {
  consoleDir = await mkdtemp(join(tmpdir(), 'inferq-console-'));
  await mkdir(join(consoleDir, 'assets'));
  await writeFile(join(consoleDir, 'index.html'), '<!doctype html><title>inferq console</title>');
  await writeFile(join(consoleDir, 'assets', 'app-1234.js'), 'console.log(1)');
  t = await buildTestApp({ consoleDir });
  redis = createRedisConnection(t.ctx.env.REDIS_URL!, 'producer');
  expect((await t.registerModel('mlp')).statusCode).toBe(201);
});
afterAll(async () => {
  await redis.quit();
  await t.close();
});

const get = (url: string, key?: string) => t.server.inject({ method: 'GET', url, headers: t.auth(key) });
const submit = (priority: string, key?: string) =>
  t.server.inject({ method: 'POST', url: '/v1/jobs', payload: { model: 'mlp', inputs: [mlpInput(1, Math.random())], priority }, headers: t.auth(key) });

const worker = (id: string) =>
  fakeWorkerStatus(id, ['mlp'], {
    modelsLoaded: [{ model: 'mlp', version: 1, provider: 'cpu', loadedAt: new Date().toISOString() }],
    jobsSucceeded: 3,
    batches: 1,
  });

describe('GET /v1/me', () => {
  it("describes the caller's key", async () => {
    expect((await get('/v1/me')).json()).toMatchObject({ admin: true, scopes: ['admin'] });
    expect((await get('/v1/me', t.userKey)).json()).toMatchObject({ admin: false, scopes: ['jobs:read', 'jobs:write'] });
    const uploader = (await t.keys.createKey('uploader', ['models:write'])).secret;
    expect((await get('/v1/me', uploader)).json()).toMatchObject({ admin: false, scopes: ['models:write'] });
    const bad = await t.server.inject({ method: 'GET', url: '/v1/me', headers: { authorization: 'Bearer iq_nope' } });
    expect(bad.json()).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
  });
});

describe('GET /v1/workers and /v1/stats', () => {
  it('lists live workers and drops those whose heartbeat expired', async () => {
    await publishWorkerStatus(redis, t.ctx.prefix, worker('w-live'), 60_000);
    await publishWorkerStatus(redis, t.ctx.prefix, worker('w-gone'), -1);
    const res = await get('/v1/workers');
    expect(res.statusCode).toBe(200);
    expect(res.json().items.map((w: { workerId: string }) => w.workerId)).toEqual(['w-live']);
  });

  it('counts submissions and queue depth per priority from Postgres and the queue', async () => {
    const key = await t.newKey();
    for (const p of ['high', 'normal', 'normal', 'low']) expect((await submit(p, key)).statusCode).toBe(202);
    const mine = (await get('/v1/stats?windowMinutes=5', key)).json();
    expect(mine.scope).toBe('key');
    expect(mine.series).toHaveLength(5);
    expect(mine.series.reduce((n: number, p: { submitted: number }) => n + p.submitted, 0)).toBe(4);
    expect(mine.submittedPerSec).toBeCloseTo(4 / 60);
    expect(mine.queues).toEqual([expect.objectContaining({ model: 'mlp', workers: 1 })]);
    const all = (await get('/v1/stats')).json();
    expect(all.scope).toBe('all');
    expect(all.workersOnline).toBe(1);
    const q = all.queues[0];
    expect([q.high, q.normal, q.low].every((n: number) => n >= 1)).toBe(true);
    expect(q.normal).toBeGreaterThanOrEqual(2);
  });

  it('reports finished jobs: rates, percentiles and batch size', async () => {
    const key = await t.newKey();
    const { id } = (await submit('normal', key)).json();
    await t.ctx.pool.query(
      "UPDATE jobs SET status = 'succeeded', started_at = now(), finished_at = now(), queue_ms = 12, infer_ms = 3.5, batch_size = 8 WHERE id = $1",
      [id],
    );
    const stats = (await get('/v1/stats', key)).json();
    expect(stats).toMatchObject({ queueMsP50: 12, inferMsP95: 3.5, avgBatchSize: 8, errorRate: 0 });
    expect(stats.completedPerSec).toBeCloseTo(1 / 60);
  });
});

describe('job inputs, outputs and retry', () => {
  it('downloads input bytes, and re-submits a job as a new one with the same inputs', async () => {
    const input = mlpInput(1, 42);
    const { id } = (
      await t.server.inject({ method: 'POST', url: '/v1/jobs', payload: { model: 'mlp', inputs: [input], priority: 'low' }, headers: t.auth(t.userKey) })
    ).json();
    const detail = (await get(`/v1/jobs/${id}`, t.userKey)).json();
    expect(detail.inputs).toEqual([{ name: 'features', datatype: 'FP32', shape: [1, 64], bytes: 256 }]);
    const raw = await get(`/v1/jobs/${id}/inputs/0`, t.userKey);
    expect(raw.statusCode).toBe(200);
    expect(raw.headers['x-tensor-shape']).toBe('1,64');
    expect(Array.from(new Float32Array(new Uint8Array(raw.rawPayload).buffer))).toEqual(Array.from(Float32Array.from(input.data)));
    expect((await get(`/v1/jobs/${id}/outputs/0`, t.userKey)).json().code).toBe('OUTPUT_NOT_FOUND');
    expect((await get(`/v1/jobs/${id}/inputs/0`, await t.newKey())).statusCode).toBe(404);

    const retry = await t.server.inject({ method: 'POST', url: `/v1/jobs/${id}/retry`, headers: t.auth(t.userKey) });
    expect(retry.statusCode).toBe(202);
    const again = (await get(`/v1/jobs/${retry.json().id}`, t.userKey)).json();
    expect(again).toMatchObject({ model: 'mlp', modelVersion: 1, priority: 'low', status: 'queued', inputs: detail.inputs });
    expect(again.id).not.toBe(id);
  });
});

describe('the web console', () => {
  it('serves the built console at / with client-side routes, and keeps API 404s as problems', async () => {
    const root = await t.server.inject({ method: 'GET', url: '/' });
    expect(root.statusCode).toBe(200);
    expect(root.body).toContain('inferq console');
    const deep = await t.server.inject({ method: 'GET', url: '/jobs/123' });
    expect(deep.body).toContain('inferq console');
    expect(deep.headers['cache-control']).toBe('no-cache');
    const asset = await t.server.inject({ method: 'GET', url: '/assets/app-1234.js' });
    expect(asset.headers['cache-control']).toContain('immutable');
    expect((await t.server.inject({ method: 'GET', url: '/assets/app-0000.js' })).statusCode).toBe(404);
    const api = await get('/v1/nothing');
    expect(api.json()).toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });
});
