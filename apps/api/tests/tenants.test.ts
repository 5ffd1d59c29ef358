import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES, type AuditEntry, type Scope } from '@inferq/contracts';
import { createLogger } from '@inferq/core';
import { completeJobs, startJobs } from '@inferq/db';
import { createJobProducer, createRedisConnection } from '@inferq/queue';
import { jobOutputKey } from '@inferq/storage';
import { testBatchRun } from '@inferq/test-utils';
import { buildApp } from '../src/app.ts';
import { buildTestApp, mlpInput, type TestApp } from './helpers.ts';

const OUTPUT_URL_TTL_S = 90;
/** Every request in this file goes through the limiter; keys without their own limit get this one. */
const DEFAULT_RATE_LIMIT_PER_MIN = 1_000;

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ outputUrlTtlS: OUTPUT_URL_TTL_S, rateLimitPerMin: DEFAULT_RATE_LIMIT_PER_MIN });
  expect((await t.registerModel('mlp')).statusCode).toBe(201);
});
afterAll(() => t.close());

const request = (method: string, url: string, key?: string, headers: Record<string, string> = {}) =>
  t.server.inject({ method: method as 'GET', url, headers: { ...(key && { authorization: `Bearer ${key}` }), ...headers } });
const submit = async (key: string): Promise<string> => {
  const res = await t.server.inject({ method: 'POST', url: '/v1/jobs', payload: { model: 'mlp', inputs: [mlpInput(1, Math.random())] }, headers: t.auth(key) });
  expect(res.statusCode).toBe(202);
  return res.json().id;
};
const keyIdOf = async (key: string): Promise<string> => (await request('GET', '/v1/me', key)).json().keyId;

/** Routes anyone may call: probes and the OpenAPI docs (the console too, when built). */
const isPublic = (url: string) =>
  ['/healthz', '/readyz', '/metrics', '/v2/health/live', '/v2/health/ready'].includes(url) || url === '/docs' || url.startsWith('/docs/');
/** A concrete URL for a route pattern: params become a fresh id, index 0, or the registered model. */
const concrete = (url: string, id: string = randomUUID()) =>
  url.replace(/:(\w+)/g, (_, name: string) => (name === 'index' ? '0' : name === 'name' ? 'mlp' : id)).replace('*', 'x');
/** The route's concrete URL for the scope checks; the retire route names a version nobody registered, so they never retire mlp. */
const urlFor = (route: { method: string; url: string }) =>
  route.method === 'DELETE' && route.url === '/v1/models/:name' ? '/v1/models/mlp:999' : concrete(route.url);

describe('authentication and scopes on every route', () => {
  const scoped = () => t.routes.filter((r) => r.scope !== undefined);

  it('has no route without a scope but the public ones', () => {
    expect(scoped().length).toBeGreaterThan(10);
    expect(t.routes.filter((r) => r.scope === undefined && !isPublic(r.url))).toEqual([]);
  });

  it('answers 401 without a key, with a malformed key and with a revoked key', async () => {
    const revoked = await t.newKey({ scopes: [...SCOPES] });
    expect((await request('POST', `/v1/keys/${await keyIdOf(revoked)}/revoke`, t.adminKey)).statusCode).toBe(200);
    const wrongSecret = `${t.adminKey.slice(0, 16)}${'x'.repeat(t.adminKey.length - 16)}`;
    for (const route of scoped()) {
      for (const [why, headers] of [
        ['no key', {}],
        ['a malformed key', { authorization: 'Bearer iq_nope' }],
        ['not a bearer token', { authorization: `Basic ${t.adminKey}` }],
        ['a wrong secret for a real prefix', { authorization: `Bearer ${wrongSecret}` }],
        ['a revoked key', { authorization: `Bearer ${revoked}` }],
      ] as const) {
        const res = await request(route.method, urlFor(route), undefined, headers);
        expect(res.statusCode, `${route.method} ${route.url} with ${why}`).toBe(401);
        if (route.method !== 'HEAD') expect(res.json().code).toBe('UNAUTHENTICATED');
      }
    }
  });

  it("answers 403 to a key lacking the route's scope, and lets a key holding it through", async () => {
    const keys = new Map<string, string>();
    const keyFor = async (scopes: Scope[]) => {
      const name = scopes.join(',');
      if (!keys.has(name)) keys.set(name, await t.newKey({ scopes }));
      return keys.get(name)!;
    };
    for (const route of scoped()) {
      if (route.scope === 'any') continue;
      const lacking = await keyFor(SCOPES.filter((s) => s !== route.scope && s !== 'admin'));
      const res = await request(route.method, urlFor(route), lacking);
      expect(res.statusCode, `${route.method} ${route.url} without ${route.scope}`).toBe(403);
      if (route.method !== 'HEAD') expect(res.json().code).toBe('FORBIDDEN');
      const holding = route.scope === 'admin' ? t.adminKey : await keyFor([route.scope as Scope]);
      const through = await request(route.method, urlFor(route), holding);
      expect([401, 403], `${route.method} ${route.url} with ${route.scope}`).not.toContain(through.statusCode);
    }
  });
});

describe("one key never reaches another key's jobs", () => {
  let a: string;
  let b: string;
  let jobA: string;
  beforeAll(async () => {
    [a, b] = [await t.newKey(), await t.newKey()];
    jobA = await submit(a);
    // Play the worker: the job succeeds with one output kept in S3.
    const batchId = randomUUID();
    expect((await startJobs(t.ctx.pool, { ids: [jobA], workerId: 'w', batchId, batchSize: 1 })).size).toBe(1);
    const key = jobOutputKey(jobA, new Date(), batchId, 0);
    await t.ctx.storage.putObject(key, new Uint8Array(40), { contentType: 'application/octet-stream' });
    await completeJobs(t.ctx.pool, testBatchRun(batchId), [
      { attempt: 1, id: jobA, inferMs: 1, items: 1, deviceMs: 1, outputs: [{ name: 'out', datatype: 'FP32', shape: [1, 10], bytes: 40, key }] },
    ]);
  });

  it("answers 404, never 403, on every route of A's job", async () => {
    const jobRoutes = t.routes.filter((r) => r.url.startsWith('/v1/jobs/:id') && r.method !== 'HEAD');
    expect(jobRoutes.map((r) => `${r.method} ${r.url}`)).toEqual(
      expect.arrayContaining([
        'GET /v1/jobs/:id',
        'POST /v1/jobs/:id/cancel',
        'DELETE /v1/jobs/:id',
        'POST /v1/jobs/:id/retry',
        'GET /v1/jobs/:id/inputs/:index',
        'GET /v1/jobs/:id/outputs/:index',
      ]),
    );
    for (const route of jobRoutes) {
      const res = await request(route.method, concrete(route.url, jobA), b);
      expect(res.statusCode, `${route.method} ${route.url}`).toBe(404);
      expect(res.json().code).toMatch(/NOT_FOUND$/);
    }
    // Nothing happened to A's job, and B got no copy of it.
    expect((await request('GET', `/v1/jobs/${jobA}`, a)).json().status).toBe('succeeded');
    expect((await request('GET', '/v1/jobs', b)).json().items).toEqual([]);
  });

  it("lists only the caller's jobs; an admin sees both", async () => {
    const jobB = await submit(b);
    expect((await request('GET', '/v1/jobs', b)).json().items.map((j: { id: string }) => j.id)).toEqual([jobB]);
    expect((await request('GET', '/v1/jobs', a)).json().items.map((j: { id: string }) => j.id)).toEqual([jobA]);
    const all = (await request('GET', '/v1/jobs?limit=500', t.adminKey)).json().items.map((j: { id: string }) => j.id);
    expect(all).toEqual(expect.arrayContaining([jobA, jobB]));
  });

  it("gives the owner a presigned URL for that job's output that expires after the configured TTL", async () => {
    const [output] = (await request('GET', `/v1/jobs/${jobA}`, a)).json().outputs;
    const url = new URL(output.url);
    expect(url.pathname).toContain(jobA);
    expect(url.searchParams.get('X-Amz-Expires')).toBe(String(OUTPUT_URL_TTL_S));
    expect((await request('GET', `/v1/jobs/${jobA}/outputs/0`, a)).rawPayload.byteLength).toBe(40);
  });

  it("bulk cancel and retry never reach A's jobs from B, even naming A's key; an admin's dry run finds them", async () => {
    const aKeyId = await keyIdOf(a);
    const queuedA = await submit(a);
    const bulk = (action: string, key: string, filter: { keyId?: string; id?: string }, dryRun = false) =>
      t.server.inject({ method: 'POST', url: `/v1/jobs/bulk-${action}`, payload: { filter, dryRun }, headers: t.auth(key) });
    for (const action of ['cancel', 'retry']) {
      for (const filter of [{ keyId: aKeyId }, { id: jobA }, { id: queuedA }]) {
        const res = await bulk(action, b, filter);
        expect(res.statusCode, `${action} ${JSON.stringify(filter)}`).toBe(200);
        expect(res.json()).toMatchObject({ matched: 0, touched: 0 });
      }
    }
    expect((await request('GET', `/v1/jobs/${queuedA}`, a)).json().status).toBe('queued');
    expect((await bulk('cancel', t.adminKey, { keyId: aKeyId }, true)).json()).toMatchObject({ matched: 1, dryRun: true });
    expect((await bulk('cancel', t.adminKey, { id: queuedA })).json()).toMatchObject({ matched: 1, touched: 1 });
  });
});

describe('per-key rate limits', () => {
  it("answers 429 RATE_LIMITED with Retry-After past a key's limit, leaving other keys alone", async () => {
    const created = await t.server.inject({ method: 'POST', url: '/v1/keys', payload: { name: 'slow', rateLimitPerMin: 5 }, headers: t.auth() });
    expect(created.json()).toMatchObject({ rateLimitPerMin: 5 });
    const slow = created.json().secret;
    const other = await t.newKey({ rateLimitPerMin: 5 });
    for (let i = 1; i <= 5; i++) {
      const res = await request('GET', '/v1/me', slow);
      expect(res.statusCode).toBe(200);
      expect(res.headers).toMatchObject({ 'ratelimit-limit': '5', 'ratelimit-remaining': String(5 - i) });
    }
    const limited = await request('GET', '/v1/jobs', slow);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['content-type']).toContain('application/problem+json');
    expect(limited.json()).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(limited.headers['ratelimit-remaining']).toBe('0');

    expect((await request('GET', '/v1/me', other)).statusCode).toBe(200);
    expect((await request('GET', '/v1/me', t.userKey)).headers['ratelimit-limit']).toBe(String(DEFAULT_RATE_LIMIT_PER_MIN));
    const probe = await request('GET', '/healthz', slow);
    expect(probe.statusCode).toBe(200);
    expect(probe.headers['ratelimit-limit']).toBeUndefined();
    const listed = (await request('GET', '/v1/keys', t.adminKey)).json().items.find((k: { id: string }) => k.id === created.json().id);
    expect(listed).toMatchObject({ rateLimitPerMin: 5 });
  });

  it('lets requests through unlimited while Redis is unreachable', async () => {
    const redis = createRedisConnection('redis://127.0.0.1:1', 'producer');
    redis.on('error', () => {});
    const app = await buildApp({
      logger: createLogger({ service: 'api-test', level: 'silent', pretty: false }),
      pool: t.ctx.pool,
      redis,
      producer: createJobProducer({ connection: redis, prefix: t.ctx.prefix }),
      storage: t.ctx.storage,
      settings: {
        bodyLimitBytes: 1 << 20,
        modelUploadLimitBytes: 1 << 20,
        inputMaxBytes: 1 << 20,
        inlineTensorMaxBytes: 1 << 14,
        outputUrlTtlS: 60,
        cacheTtlMs: 0,
        rateLimitPerMin: 1,
        webhooks: { signingSecret: 'x'.repeat(32), allowPrivate: false },
      },
    });
    try {
      for (let i = 0; i < 3; i++) expect((await app.server.inject({ method: 'GET', url: '/v1/jobs', headers: t.auth(t.userKey) })).statusCode).toBe(200);
    } finally {
      await app.server.close();
      redis.disconnect();
    }
  });
});

describe('the audit log', () => {
  const audit = async (key = t.adminKey): Promise<AuditEntry[]> => {
    const entries: AuditEntry[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: AuditEntry[]; nextCursor: string | null } = (
        await request('GET', `/v1/audit?limit=2${cursor ? `&cursor=${cursor}` : ''}`, key)
      ).json();
      entries.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    return entries;
  };

  it('records each key created and revoked and each model uploaded once, with the actor and request id', async () => {
    const adminId = await keyIdOf(t.adminKey);
    expect((await request('POST', '/v1/keys', t.adminKey, { 'content-type': 'application/json' })).statusCode).toBe(400); // refused: nothing recorded
    const key = (
      await t.server.inject({
        method: 'POST',
        url: '/v1/keys',
        payload: { name: 'audited', scopes: ['jobs:read'] },
        headers: { ...t.auth(), 'x-request-id': 'req-create' },
      })
    ).json();
    expect((await request('POST', `/v1/keys/${key.id}/revoke`, t.adminKey, { 'x-request-id': 'req-revoke' })).statusCode).toBe(200);
    expect((await request('POST', `/v1/keys/${key.id}/revoke`, t.adminKey)).statusCode).toBe(404); // revoking twice records nothing

    const entries = await audit();
    expect(entries.map((e) => e.id)).toEqual([...entries.map((e) => e.id)].sort((x, y) => y - x));
    const about = (resource: string) => entries.filter((e) => e.resource === resource);
    expect(about(`keys/${key.id}`)).toMatchObject([
      { action: 'key:revoked', actorKeyId: adminId, details: { requestId: 'req-revoke', name: 'audited' } },
      {
        action: 'key:created',
        actorKeyId: adminId,
        details: { requestId: 'req-create', name: 'audited', scopes: ['jobs:read'], rateLimitPerMin: null, weight: 1 },
      },
    ]);
    expect(about('models/mlp:1')).toMatchObject([
      { action: 'model:uploaded', actorKeyId: adminId, details: { sizeBytes: expect.any(Number), sha256: expect.any(String) } },
    ]);
  });

  it('is readable only by admins', async () => {
    expect((await request('GET', '/v1/audit', t.userKey)).json()).toMatchObject({ status: 403, code: 'FORBIDDEN' });
    expect((await request('GET', '/v1/audit?cursor=bm9wZQ', t.adminKey)).json()).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
  });
});
