import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@inferq/core';
import { startJobs } from '@inferq/db';
import { createRedisConnection, createQueueConsumer, deleteKeysWithPrefix, queueKeyStem, removeWorkerStatus, type RedisClient } from '@inferq/queue';
import { publishFakeWorker, waitFor } from '@inferq/test-utils';
import { createDeadlineSweeper } from '../src/background/deadline-sweeper.ts';
import { buildTestApp, mlpInput, type TestApp } from './helpers.ts';

let t: TestApp;
let redis: RedisClient;
beforeAll(async () => {
  t = await buildTestApp({ queueMaxDepth: 5, waitMaxS: 2 });
  redis = createRedisConnection(t.ctx.env.REDIS_URL!, 'producer');
  expect((await t.registerModel('mlp')).statusCode).toBe(201);
});
afterAll(async () => {
  await redis.quit();
  await t.close();
});

const submit = (body: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  t.server.inject({
    method: 'POST',
    url: '/v1/jobs',
    payload: { model: 'mlp', inputs: [mlpInput(1, Math.random())], ...body },
    headers: { ...t.auth(), ...headers },
  });
const getJob = async (id: string) => (await t.server.inject({ method: 'GET', url: `/v1/jobs/${id}`, headers: t.auth() })).json();
const clearQueue = async () => {
  await deleteKeysWithPrefix(t.redis, queueKeyStem(t.producer.prefix, 'mlp'));
  await t.ctx.pool.query("UPDATE jobs SET status = 'canceled', finished_at = now() WHERE status = 'queued'");
};

describe('deadlines', () => {
  it('refuses a deadline that has already passed', async () => {
    const res = await submit({ deadline: new Date(Date.now() - 1_000).toISOString() });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ pointer: '/body/deadline' }] });
  });

  it('a job still queued at its deadline ends expired, and its queue job is gone', async () => {
    const sweeper = createDeadlineSweeper({
      pool: t.ctx.pool,
      producer: t.producer,
      logger: createLogger({ service: 't', level: 'silent' }),
      intervalMs: 1_000,
    });
    const soon = await submit({ deadline: new Date(Date.now() + 300).toISOString() });
    const later = await submit({ deadline: new Date(Date.now() + 60_000).toISOString() });
    expect([soon.statusCode, later.statusCode]).toEqual([202, 202]);
    expect((await getJob(soon.json().id)).deadline).toBeTypeOf('string');

    await waitFor(async () => (await sweeper.sweepOnce()) === 1, { what: 'the first deadline to pass' });
    expect(await getJob(soon.json().id)).toMatchObject({ status: 'expired', error: { code: 'DEADLINE_EXCEEDED' }, finishedAt: expect.any(String) });
    expect(await getJob(later.json().id)).toMatchObject({ status: 'queued' });
    expect(await t.producer.findQueuedIds('mlp', [soon.json().id, later.json().id])).toEqual(new Set([later.json().id]));
    await clearQueue();
  });

  it('a worker claiming a job past its deadline expires it instead of running it', async () => {
    const res = await submit({ deadline: new Date(Date.now() + 60_000).toISOString() });
    const other = await submit();
    const id = res.json().id;
    await t.ctx.pool.query("UPDATE jobs SET deadline_at = now() - interval '1 second' WHERE id = $1", [id]);
    const live = await startJobs(t.ctx.pool, { ids: [id, other.json().id], workerId: 'w', batchId: randomUUID(), batchSize: 2 });
    expect([...live.keys()]).toEqual([other.json().id]);
    expect(await getJob(id)).toMatchObject({ status: 'expired', error: { code: 'DEADLINE_EXCEEDED' } });
    await clearQueue();
  });
});

describe('backpressure', () => {
  it('answers 429 QUEUE_FULL with Retry-After once the backlog is at its limit, and admits again when it drains', async () => {
    const codes = [];
    for (let i = 0; i < 7; i++) codes.push((await submit()).statusCode);
    expect(codes).toEqual([202, 202, 202, 202, 202, 429, 429]);
    expect(await t.producer.backlog('mlp')).toBe(5);
    const full = await submit();
    expect(full.headers['retry-after']).toBe('1');
    expect(full.json()).toMatchObject({ code: 'QUEUE_FULL', status: 429 });

    await clearQueue();
    await waitFor(async () => (await submit()).statusCode === 202, { what: 'the drained queue to admit again' });
    await clearQueue();
  });
});

describe('a request body over the size limit', () => {
  it('is refused with 413 from its Content-Length, before the body is sent', async () => {
    await t.server.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.server.server.address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    // Declares 1 GiB and sends none of it: only the headers can have been read.
    socket.write(
      `POST /v1/jobs HTTP/1.1\r\nhost: x\r\nauthorization: ${t.auth().authorization}\r\ncontent-type: application/json\r\ncontent-length: ${2 ** 30}\r\n\r\n`,
    );
    const reply = await new Promise<string>((resolve, reject) => {
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString();
        if (text.includes('\r\n\r\n')) resolve(text);
      });
      socket.on('error', reject);
    });
    socket.destroy();
    expect(reply).toMatch(/^HTTP\/1\.1 413/);
    expect(reply).toContain('application/problem+json');
  });
});

describe('readiness and Prefer: wait', () => {
  it('/readyz names the models without a live worker and stays 200', async () => {
    const res = await t.server.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      status: 'degraded',
      modelsWithoutWorker: ['mlp'],
      checks: { postgres: { ok: true }, redis: { ok: true }, workers: { ok: false } },
    });
    expect(res.json().checks.redisEvictionPolicy).toBeDefined();
  });

  it('fails fast with 503 MODEL_UNAVAILABLE, submitting nothing, when nobody would end the wait', async () => {
    const before = (await t.ctx.pool.query('SELECT count(*)::int AS n FROM jobs')).rows[0].n;
    const res = await submit({}, { prefer: 'wait=5' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.json()).toMatchObject({ code: 'MODEL_UNAVAILABLE' });
    expect((await t.ctx.pool.query('SELECT count(*)::int AS n FROM jobs')).rows[0].n).toBe(before);
  });

  it('with a live worker, answers 200 with the finished job, or 202 when the wait runs out', async () => {
    const status = await publishFakeWorker(redis, t.ctx.prefix, `fake-${randomUUID()}`, ['mlp'], 30_000);
    // A consumer standing in for the worker: it stores a result, then acknowledges (invariant 2).
    let hold = true;
    const consumer = createQueueConsumer({ url: t.ctx.env.REDIS_URL!, prefix: t.ctx.prefix, model: 'mlp' }, async (job, ack) => {
      await waitFor(async () => !hold, { timeoutMs: 10_000, what: 'release' }).catch(() => {});
      await t.ctx.pool.query("UPDATE jobs SET status = 'succeeded', outputs = '[]', started_at = now(), finished_at = now() WHERE id = $1", [job.id]);
      ack.ack();
    });
    try {
      await waitFor(async () => (await t.server.inject({ method: 'GET', url: '/readyz' })).json().status === 'ok', { what: 'the worker to count' });

      const slow = await submit({}, { prefer: 'wait=1' });
      expect(slow.statusCode).toBe(202);
      expect(slow.headers['preference-applied']).toBe('wait=1');

      hold = false;
      const started = Date.now();
      const fast = await submit({}, { prefer: 'respond-async, wait=30' });
      expect(fast.statusCode).toBe(200);
      expect(fast.headers['preference-applied']).toBe('wait=2'); // capped at waitMaxS
      expect(fast.json()).toMatchObject({ status: 'succeeded', outputs: [] });
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      await consumer.close();
      await removeWorkerStatus(redis, t.ctx.prefix, status.workerId);
    }
  });
});
