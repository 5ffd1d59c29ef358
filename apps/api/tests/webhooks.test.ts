import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@inferq/core';
import type { Pool } from '@inferq/db';
import { createTensorStore } from '@inferq/storage';
import { waitFor } from '@inferq/test-utils';
import { createWebhookDispatcher, type WebhookDispatcher, type WebhookSettings } from '../src/webhooks/webhook-dispatcher.ts';
import { buildTestApp, mlpInput, type TestApp } from './helpers.ts';

/** A local receiver: each path answers with its queue of statuses (the last one repeats) and records what it got. */
function createReceiver() {
  const plans = new Map<string, number[]>();
  const received: Array<{ path: string; headers: IncomingHttpHeaders; body: string }> = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req
      .setEncoding('utf8')
      .on('data', (c: string) => (body += c))
      .on('end', () => {
        const path = req.url ?? '/';
        received.push({ path, headers: req.headers, body });
        const plan = plans.get(path) ?? [200];
        res.writeHead(plan.length > 1 ? plan.shift()! : plan[0]!).end();
      });
  });
  return {
    received,
    plan: (path: string, statuses: number[]) => plans.set(path, statuses),
    for: (jobId: string) => received.filter((r) => r.headers['webhook-id'] === jobId),
    async listen() {
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      return (server.address() as AddressInfo).port;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const SIGNING_SECRET = 'webhooks-test-server-secret-0123456789abcdef';
const settings = (overrides: Partial<WebhookSettings> = {}): WebhookSettings => ({
  signingSecret: SIGNING_SECRET,
  allowPrivate: true,
  maxAttempts: 3,
  pollIntervalMs: 20,
  timeoutMs: 2_000,
  retryBaseMs: 50,
  concurrency: 4,
  outputUrlTtlS: 60,
  ...overrides,
});

const receiver = createReceiver();
let base: string;
let t: TestApp;
let dispatcher: WebhookDispatcher;
/** A started dispatcher, as an API replica runs one; `pool` in place of the test's own. */
const newDispatcher = (overrides: Partial<WebhookSettings> = {}, pool: Pool = t.ctx.pool): WebhookDispatcher => {
  const started = createWebhookDispatcher({
    pool,
    tensors: createTensorStore({ storage: t.ctx.storage, inlineMaxBytes: 64 * 1024 }),
    logger: createLogger({ service: 'webhooks-test', level: 'silent', pretty: false }),
    settings: settings(overrides),
  });
  started.start();
  return started;
};
const startDispatcher = (overrides: Partial<WebhookSettings> = {}) => {
  dispatcher = newDispatcher(overrides);
};

beforeAll(async () => {
  base = `http://127.0.0.1:${await receiver.listen()}`;
  t = await buildTestApp({ webhooks: { signingSecret: SIGNING_SECRET, allowPrivate: true } });
  expect((await t.registerModel('mlp')).statusCode).toBe(201);
  startDispatcher();
});
afterAll(async () => {
  await dispatcher.close();
  await t.close();
  await receiver.close();
});

async function submitWithWebhook(url: string, key = t.userKey): Promise<string> {
  const res = await t.server.inject({
    method: 'POST',
    url: '/v1/jobs',
    payload: { model: 'mlp', inputs: [mlpInput()], webhook: { url } },
    headers: t.auth(key),
  });
  expect(res.statusCode).toBe(202);
  return res.json().id;
}

/** What a worker does when a batch succeeds: outputs stored, finished_at set. */
async function finishJob(id: string): Promise<void> {
  const logits = Buffer.from(new Float32Array(16).fill(0.5).buffer).toString('base64');
  await t.ctx.pool.query(`UPDATE jobs SET status = 'succeeded', started_at = now(), finished_at = now(), attempts = 1, outputs = $2 WHERE id = $1`, [
    id,
    JSON.stringify([{ name: 'logits', datatype: 'FP32', shape: [1, 16], bytes: 64, b64: logits }]),
  ]);
}

const deliveries = (id: string, key = t.userKey) => t.server.inject({ method: 'GET', url: `/v1/jobs/${id}/webhook-deliveries`, headers: t.auth(key) });
const settled = (id: string) =>
  waitFor(
    async () => {
      const body = (await deliveries(id)).json();
      return body.state !== 'pending' && body;
    },
    { timeoutMs: 10_000, what: `webhook of job ${id} settled` },
  );

/** A job's webhook sent by a dispatcher on `refusing.pool`: delivered at its first attempt and once, every refusal met. */
async function expectDeliveredOnceThrough(refusing: { pool: Pool; left: () => number }): Promise<void> {
  await dispatcher.close();
  dispatcher = newDispatcher({}, refusing.pool);
  try {
    const id = await submitWithWebhook(`${base}/ok`);
    await finishJob(id);
    expect(await settled(id)).toMatchObject({ state: 'delivered', attempts: 1 });
    expect(refusing.left()).toBe(0);
    expect(receiver.for(id)).toHaveLength(1);
  } finally {
    await dispatcher.close();
    startDispatcher();
  }
}

/** `pool` with its first `times` queries whose text contains `match` refused as if Postgres were restarting. */
function refuseQueries(pool: Pool, match: string, times: number): { pool: Pool; left: () => number } {
  let left = times;
  const refusing = new Proxy(pool, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (prop !== 'query') return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      return (query: unknown, ...rest: unknown[]) => {
        const text = typeof query === 'string' ? query : ((query as { text?: string } | null)?.text ?? '');
        if (left > 0 && text.includes(match)) {
          left--;
          return Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
        }
        return (target.query as (...a: unknown[]) => unknown)(query, ...rest);
      };
    },
  });
  return { pool: refusing, left: () => left };
}

/** Verifies a Standard Webhooks signature with node:crypto only, as a receiver would. */
function verifies(secret: string, headers: IncomingHttpHeaders, body: string): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`).digest('base64');
  return String(headers['webhook-signature']).split(' ').includes(`v1,${expected}`);
}

describe('delivery', () => {
  it("posts a finished job once, signed with the owner key's secret", async () => {
    const id = await submitWithWebhook(`${base}/ok`);
    expect((await deliveries(id)).json()).toMatchObject({ url: `${base}/ok`, state: 'pending', attempts: 0, nextAttemptAt: null, items: [] });
    await finishJob(id);
    const state = await settled(id);
    expect(state).toMatchObject({
      state: 'delivered',
      attempts: 1,
      nextAttemptAt: null,
      items: [{ attempt: 1, url: `${base}/ok`, statusCode: 200, error: null }],
    });

    const [got] = receiver.for(id);
    expect(got!.headers['content-type']).toBe('application/json');
    expect(Math.abs(Number(got!.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    const job = JSON.parse(got!.body);
    expect(job).toMatchObject({ id, status: 'succeeded', webhookUrl: `${base}/ok`, outputs: [{ name: 'logits', shape: [1, 16] }] });
    expect(job.outputs[0].data).toHaveLength(16);

    const secret = (await t.server.inject({ method: 'GET', url: '/v1/webhooks/secret', headers: t.auth(t.userKey) })).json().secret;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(verifies(secret, got!.headers, got!.body)).toBe(true);
    expect(verifies(secret, got!.headers, got!.body.replace('succeeded', 'failed'))).toBe(false);
    const otherSecret = (await t.server.inject({ method: 'GET', url: '/v1/webhooks/secret', headers: t.auth(await t.newKey()) })).json().secret;
    expect(verifies(otherSecret, got!.headers, got!.body)).toBe(false);

    // A later job goes through the same poll loop; the first is not posted again.
    const next = await submitWithWebhook(`${base}/ok`);
    await finishJob(next);
    await settled(next);
    expect(receiver.for(id)).toHaveLength(1);
  });

  it('retries a failing receiver with backoff and records every attempt', async () => {
    receiver.plan('/flaky', [500, 500, 200]);
    const id = await submitWithWebhook(`${base}/flaky`);
    await finishJob(id);
    const state = await settled(id);
    expect(state.state).toBe('delivered');
    expect(state.items.map((d: { attempt: number; statusCode: number }) => [d.attempt, d.statusCode])).toEqual([
      [1, 500],
      [2, 500],
      [3, 200],
    ]);
    const posts = receiver.for(id);
    expect(posts).toHaveLength(3);
    const times = state.items.map((d: { createdAt: string }) => Date.parse(d.createdAt));
    expect(times[2] - times[1]).toBeGreaterThan(times[1] - times[0]);
  });

  it('gives up after the last attempt, and a canceled job is delivered too', async () => {
    receiver.plan('/down', [503]);
    const id = await submitWithWebhook(`${base}/down`);
    expect((await t.server.inject({ method: 'POST', url: `/v1/jobs/${id}/cancel`, headers: t.auth(t.userKey) })).statusCode).toBe(200);
    const state = await settled(id);
    expect(state).toMatchObject({ state: 'given_up', attempts: 3, nextAttemptAt: null });
    expect(state.items.map((d: { statusCode: number }) => d.statusCode)).toEqual([503, 503, 503]);
    expect(JSON.parse(receiver.for(id)[0]!.body).status).toBe('canceled');
  });

  it('delivers each job once when two API replicas dispatch together', async () => {
    const replica = newDispatcher();
    try {
      const ids = await Promise.all(Array.from({ length: 20 }, () => submitWithWebhook(`${base}/ok`)));
      await t.ctx.pool.query(`UPDATE jobs SET status = 'succeeded', finished_at = now() WHERE id = ANY($1::uuid[])`, [ids]);
      await waitFor(
        async () =>
          (await t.ctx.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) AND webhook_state = 'delivered'`, [ids])).rows[0].n ===
          ids.length,
      );
      expect(ids.map((id) => receiver.for(id).length)).toEqual(ids.map(() => 1));
    } finally {
      await replica.close();
    }
  });

  it('records a delivered attempt once Postgres answers again, rather than sending it twice', async () => {
    // The first three writes of an attempt's record are refused as if Postgres were restarting.
    await expectDeliveredOnceThrough(refuseQueries(t.ctx.pool, 'INSERT INTO webhook_deliveries', 3));
  });

  it('delivers a claimed webhook once Postgres answers again, not a lease later, when the job cannot be read', async () => {
    // The claim went through; the job's read before the POST is refused as if Postgres went away just then. The
    // claim's lease (the timeout and 30 s) is longer than `settled` waits: the attempt itself must wait the outage out.
    await expectDeliveredOnceThrough(refuseQueries(t.ctx.pool, 'LEFT JOIN LATERAL (SELECT device, provider, model_sha256 FROM batches', 3));
  });

  it("hides a job's deliveries from another key", async () => {
    const id = await submitWithWebhook(`${base}/ok`);
    const res = await deliveries(id, await t.newKey());
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('JOB_NOT_FOUND');
    expect((await deliveries(id, t.adminKey)).statusCode).toBe(200);
  });

  it('checks the address again at delivery: a name or literal that is now private is not connected to', async () => {
    await dispatcher.close();
    startDispatcher({ allowPrivate: false });
    const port = new URL(base).port;
    for (const url of [`${base}/ok`, `http://localhost:${port}/ok`]) {
      const id = await submitWithWebhook(url);
      await finishJob(id);
      const state = await settled(id);
      expect(state.state).toBe('given_up');
      expect(state.items[0]).toMatchObject({ statusCode: null, error: expect.stringMatching(/loopback address/) });
      expect(receiver.for(id)).toHaveLength(0);
    }
  });
});

describe('URL policy at submit (private addresses not allowed)', () => {
  let strict: TestApp;
  beforeAll(async () => {
    strict = await buildTestApp({ webhooks: { signingSecret: SIGNING_SECRET, allowPrivate: false } });
    expect((await strict.registerModel('mlp')).statusCode).toBe(201);
  });
  afterAll(() => strict.close());

  const submit = (url: string) =>
    strict.server.inject({ method: 'POST', url: '/v1/jobs', payload: { model: 'mlp', inputs: [mlpInput()], webhook: { url } }, headers: strict.auth() });

  it.each([
    'http://127.0.0.1/hook',
    'http://10.0.0.1/hook',
    'http://[::1]/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://localhost:8080/hook',
    'http://[::ffff:192.168.1.1]/hook',
    'http://0x7f000001/hook',
    'ftp://198.51.100.7/hook',
  ])('refuses %s', async (url) => {
    const res = await submit(url);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'WEBHOOK_URL_REFUSED', errors: [{ pointer: '/body/webhook/url', code: 'WEBHOOK_URL_REFUSED' }] });
  });

  it('accepts a public address', async () => {
    expect((await submit('https://8.8.8.8/hook')).statusCode).toBe(202);
  });
});
