import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisConnection, createQueueConsumer, removeWorkerStatus, type RedisClient } from '@inferq/queue';
import { publishFakeWorker, waitFor } from '@inferq/test-utils';
import { buildTestApp, mlpInput, type TestApp } from './helpers.ts';

let t: TestApp;
let redis: RedisClient;
beforeAll(async () => {
  t = await buildTestApp({ waitMaxS: 1 });
  redis = createRedisConnection(t.ctx.env.REDIS_URL!, 'producer');
  expect((await t.registerModel('mlp')).statusCode).toBe(201);
});
afterAll(async () => {
  await redis.quit();
  await t.close();
});

const post = (path: string, key = t.adminKey, headers: Record<string, string> = {}) =>
  t.server.inject({ method: 'POST', url: path, headers: { ...t.auth(key), ...headers } });
const submit = (headers: Record<string, string> = {}) =>
  t.server.inject({ method: 'POST', url: '/v1/jobs', payload: { model: 'mlp', inputs: [mlpInput(1, Math.random())] }, headers: { ...t.auth(), ...headers } });
const statsQueue = async () =>
  (await t.server.inject({ method: 'GET', url: '/v1/stats', headers: t.auth() })).json().queues.find((q: any) => q.model === 'mlp');
const audited = async () =>
  (await t.server.inject({ method: 'GET', url: '/v1/audit?limit=500', headers: t.auth() }))
    .json()
    .items.filter((e: { resource: string }) => e.resource === 'models/mlp')
    .map((e: { action: string; details: { requestId: string } }) => `${e.action} ${e.details.requestId}`);
const pausedGauge = async () => {
  const body = (await t.server.inject({ method: 'GET', url: '/metrics', headers: t.auth() })).body;
  return body.match(/^inferq_queue_paused\{model="mlp"\} (\d)$/m)?.[1];
};

describe('pausing and resuming a model queue', () => {
  it('is for admin keys only: a key with every other scope gets 403 and changes nothing', async () => {
    const operator = await t.newKey({ scopes: ['jobs:read', 'jobs:write', 'models:write'] });
    expect((await post('/v1/models/mlp/pause', operator)).statusCode).toBe(403);
    expect((await post('/v1/models/mlp/resume', operator)).statusCode).toBe(403);
    expect((await post('/v1/models/mlp/pause', t.userKey)).statusCode).toBe(403);
    expect(await t.producer.isPaused('mlp')).toBe(false);
    expect(await audited()).toEqual([]);
  });

  it('answers 404 MODEL_NOT_FOUND for a model that is not registered, and 400 for a bad name', async () => {
    const unknown = await post('/v1/models/absent/pause');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe('MODEL_NOT_FOUND');
    expect(await t.producer.isPaused('absent')).toBe(false);
    expect((await post('/v1/models/Bad%20Name/resume')).statusCode).toBe(400);
  });

  it('pauses idempotently, shows it in /v1/stats and the metric, and audits only the change', async () => {
    const first = await post('/v1/models/mlp/pause', t.adminKey, { 'x-request-id': 'req-pause' });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ model: 'mlp', paused: true, high: 0, normal: 0, low: 0, batch: 0, active: 0, delayed: 0, workers: 0 });
    const again = await post('/v1/models/mlp/pause', t.adminKey, { 'x-request-id': 'req-pause-again' });
    expect(again.statusCode).toBe(200);
    expect(again.json().paused).toBe(true);
    expect(await t.producer.isPaused('mlp')).toBe(true);
    expect(await statsQueue()).toMatchObject({ paused: true });
    expect(await pausedGauge()).toBe('1');
    expect(await audited()).toEqual(['model:paused req-pause']);
  });

  it('accepts and keeps jobs while paused: they wait in the queue, counted by priority', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await submit();
      expect(res.statusCode).toBe(202);
      ids.push(res.json().id);
    }
    expect(await t.producer.findQueuedIds('mlp', ids)).toEqual(new Set(ids));
    expect(await t.producer.backlog('mlp')).toBe(3);
    expect(await statsQueue()).toMatchObject({ paused: true, normal: 3 });
    // A job in the paused queue can still be canceled: it leaves the queue.
    const extra = (await submit()).json().id as string;
    const canceled = await t.server.inject({ method: 'POST', url: `/v1/jobs/${extra}/cancel`, headers: t.auth() });
    expect(canceled.json().status).toBe('canceled');
    expect(await t.producer.backlog('mlp')).toBe(3);
  });

  it('lets Prefer: wait and /v2 infer wait out their time with the job still queued, and a consumer run them only after resume', async () => {
    const status = await publishFakeWorker(redis, t.ctx.prefix, `fake-${randomUUID()}`, ['mlp'], 30_000);
    const started: string[] = [];
    const consumer = createQueueConsumer({ url: t.ctx.env.REDIS_URL!, prefix: t.ctx.prefix, model: 'mlp' }, async (job, ack) => {
      started.push(job.id!);
      await t.ctx.pool.query("UPDATE jobs SET status = 'succeeded', outputs = '[]', started_at = now(), finished_at = now() WHERE id = $1", [job.id]);
      ack.ack();
    });
    try {
      await consumer.waitUntilReady();
      const waited = await submit({ prefer: 'wait=1' });
      expect(waited.statusCode).toBe(202);
      expect(waited.json()).toMatchObject({ status: 'queued' });
      // An Open Inference Protocol call waits as long, then names the job it left queued.
      const v2 = await t.server.inject({ method: 'POST', url: '/v2/models/mlp/infer', payload: { inputs: [mlpInput(1, 5)] }, headers: t.auth() });
      expect(v2.statusCode).toBe(504);
      expect(v2.json().code).toBe('INFERENCE_TIMEOUT');
      const v2Job = String(v2.headers.location).split('/').pop()!;
      expect((await t.server.inject({ method: 'GET', url: `/v1/jobs/${v2Job}`, headers: t.auth() })).json().status).toBe('queued');
      expect(started).toEqual([]);
      expect(await t.producer.backlog('mlp')).toBe(5);

      const resumed = await post('/v1/models/mlp/resume', t.adminKey, { 'x-request-id': 'req-resume' });
      expect(resumed.statusCode).toBe(200);
      expect(resumed.json()).toMatchObject({ model: 'mlp', paused: false });
      expect((await post('/v1/models/mlp/resume', t.adminKey, { 'x-request-id': 'req-resume-again' })).json().paused).toBe(false);
      await waitFor(async () => started.length === 5, { timeoutMs: 10_000, what: 'the kept jobs to run after resume' });
      expect(started).toEqual(expect.arrayContaining([waited.json().id, v2Job]));
      expect(await statsQueue()).toMatchObject({ paused: false });
      expect(await pausedGauge()).toBe('0');
      expect(await audited()).toEqual(['model:resumed req-resume', 'model:paused req-pause']);
    } finally {
      await consumer.close();
      await removeWorkerStatus(redis, t.ctx.prefix, status.workerId);
    }
  });
});
