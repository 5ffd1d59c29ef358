import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@inferq/core';
import type { Pool } from '@inferq/db';
import { createJobProducer, createRedisConnection } from '@inferq/queue';
import { createTestContext, type TestContext } from '@inferq/test-utils';
import { buildApp, type App } from '../src/app.ts';
import { buildTestApp, demoModelBytes, mlpInput, multipartBody, type TestApp } from './helpers.ts';

const settings = {
  bodyLimitBytes: 1 << 20,
  modelUploadLimitBytes: 1 << 24,
  inputMaxBytes: 1 << 20,
  inlineTensorMaxBytes: 1 << 14,
  outputUrlTtlS: 60,
  cacheTtlMs: 1_000,
  webhooks: { signingSecret: 'test-webhook-signing-secret-0123456789', allowPrivate: false },
};

describe('group commit of submissions', () => {
  let t: TestApp;
  let inserts = 0;
  beforeAll(async () => {
    t = await buildTestApp();
    // Count the INSERTs into jobs that reach Postgres (the real one, only observed).
    const query = t.ctx.pool.query.bind(t.ctx.pool) as (...args: unknown[]) => Promise<unknown>;
    (t.ctx.pool as unknown as { query: unknown }).query = (statement: unknown, ...rest: unknown[]) => {
      // A string, or a config object (the job statements are named, prepared ones).
      const text = typeof statement === 'string' ? statement : (statement as { text?: string } | undefined)?.text;
      if (text && /\bINSERT INTO jobs \(/.test(text)) inserts++;
      return query(statement, ...rest);
    };
    expect((await t.registerModel('mlp')).statusCode).toBe(201);
  });
  afterAll(() => t.close());

  it('records concurrent submissions in shared commits, each answered with its own job', async () => {
    inserts = 0;
    const replies = await Promise.all(
      Array.from({ length: 64 }, (_, i) =>
        t.server.inject({ method: 'POST', url: '/v1/jobs', payload: { model: 'mlp', inputs: [mlpInput(1, i)] }, headers: t.auth() }),
      ),
    );
    expect(replies.every((r) => r.statusCode === 202)).toBe(true);
    const ids = new Set(replies.map((r) => r.json().id));
    expect(ids.size).toBe(64);
    const { rows } = await t.ctx.pool.query("SELECT count(*)::int AS n FROM jobs WHERE status = 'queued'");
    expect(rows[0].n).toBe(64);
    expect(inserts).toBeGreaterThan(0);
    expect(inserts).toBeLessThan(64);
  });
});

describe('submission while Redis is unreachable', () => {
  let ctx: TestContext;
  let app: App;
  beforeAll(async () => {
    ctx = await createTestContext();
    const redis = createRedisConnection('redis://127.0.0.1:1', 'producer');
    redis.on('error', () => {});
    app = await buildApp({
      logger: createLogger({ service: 'api-test', level: 'silent', pretty: false }),
      pool: ctx.pool as Pool,
      redis,
      producer: createJobProducer({ connection: redis, prefix: ctx.prefix }),
      storage: ctx.storage,
      settings,
    });
    const admin = await app.keys.createKey('admin', ['admin']);
    const body = multipartBody({ name: 'mlp' }, { name: 'mlp.onnx', bytes: await demoModelBytes('mlp') });
    expect(
      (
        await app.server.inject({
          method: 'POST',
          url: '/v1/models',
          payload: body.payload,
          headers: { ...body.headers, authorization: `Bearer ${admin.secret}` },
        })
      ).statusCode,
    ).toBe(201);
    (app as App & { adminKey: string }).adminKey = admin.secret;
  });
  afterAll(async () => {
    await app.server.close();
    await ctx.close();
  });

  it('answers 503 QUEUE_UNAVAILABLE with Retry-After and leaves no job behind', async () => {
    const key = (app as App & { adminKey: string }).adminKey;
    const res = await app.server.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: { model: 'mlp', inputs: [mlpInput()] },
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('2');
    expect(res.json().code).toBe('QUEUE_UNAVAILABLE');
    const { rows } = await ctx.pool.query('SELECT count(*)::int AS n FROM jobs');
    expect(rows[0].n).toBe(0);
  });
});
