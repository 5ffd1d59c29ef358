import { readFile } from 'node:fs/promises';
import type { Scope } from '@inferq/contracts';
import { createLogger } from '@inferq/core';
import { createJobProducer, createRedisConnection, waitForReady, type JobProducer, type RedisClient } from '@inferq/queue';
import { createTestContext, demoModel, type TestContext } from '@inferq/test-utils';
import { buildApp, type App } from '../src/app.ts';

export interface TestApp extends App {
  ctx: TestContext;
  producer: JobProducer;
  /** The producer's connection. */
  redis: RedisClient;
  adminKey: string;
  /** A non-admin key with jobs:read and jobs:write. */
  userKey: string;
  auth(key?: string): { authorization: string };
  /** Creates another non-admin key (jobs:read, jobs:write unless told) and returns its secret. */
  newKey(options?: { scopes?: Scope[]; rateLimitPerMin?: number }): Promise<string>;
  registerModel(name: string, bytes?: Uint8Array, fields?: Record<string, string>): Promise<{ statusCode: number; json: () => any }>;
  close(): Promise<void>;
}

export const demoModelBytes = (name: string): Promise<Buffer> => readFile(demoModel(name).path);

export function multipartBody(fields: Record<string, string>, file?: { name: string; bytes: Uint8Array }) {
  const boundary = `----inferq${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  if (file) {
    parts.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    );
    parts.push(Buffer.from(file.bytes));
    parts.push(Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** buildApp over a fresh schema, prefix and bucket; driven with inject(), never listen(). */
export async function buildTestApp(settings: Partial<Parameters<typeof buildApp>[0]['settings']> = {}): Promise<TestApp> {
  const ctx = await createTestContext();
  const redis = createRedisConnection(ctx.env.REDIS_URL!, 'producer');
  const producer = createJobProducer({ connection: redis, prefix: ctx.prefix });
  // As the API's start does: a Cluster's slots take a moment on a busy machine, and the producer sends nothing before.
  await waitForReady(redis, 10_000);
  const app = await buildApp({
    logger: createLogger({ service: 'api-test', level: ctx.env.LOG_LEVEL!, pretty: false }),
    pool: ctx.pool,
    redis,
    producer,
    storage: ctx.storage,
    settings: {
      bodyLimitBytes: 8 * 1024 * 1024,
      modelUploadLimitBytes: 64 * 1024 * 1024,
      inputMaxBytes: 4 * 1024 * 1024,
      inlineTensorMaxBytes: 16 * 1024,
      outputUrlTtlS: 60,
      cacheTtlMs: 1_000,
      webhooks: { signingSecret: 'test-webhook-signing-secret-0123456789', allowPrivate: true },
      ...settings,
    },
  });
  const admin = await app.keys.createKey('admin', ['admin']);
  const user = await app.keys.createKey('user', ['jobs:read', 'jobs:write']);
  return {
    ...app,
    ctx,
    producer,
    redis,
    adminKey: admin.secret,
    userKey: user.secret,
    auth: (key = admin.secret) => ({ authorization: `Bearer ${key}` }),
    newKey: async ({ scopes = ['jobs:read', 'jobs:write'] as Scope[], rateLimitPerMin } = {}) =>
      (await app.keys.createKey('tenant', scopes, { rateLimitPerMin })).secret,
    async registerModel(name, bytes, fields = {}) {
      const body = multipartBody({ name, ...fields }, { name: `${name}.onnx`, bytes: bytes ?? (await demoModelBytes(name)) });
      return app.server.inject({
        method: 'POST',
        url: '/v1/models',
        payload: body.payload,
        headers: { ...body.headers, authorization: `Bearer ${admin.secret}` },
      });
    },
    async close() {
      await app.server.close();
      await producer.close();
      await redis.quit();
      await ctx.close();
    },
  };
}

/** A valid MLP input of `rows` rows, deterministic per seed. */
export function mlpInput(rows = 1, seed = 1): { name: string; datatype: string; shape: number[]; data: number[] } {
  const data = Array.from({ length: rows * 64 }, (_, i) => Math.sin(seed * 7919 + i) * 0.5);
  return { name: 'features', datatype: 'FP32', shape: [rows, 64], data };
}
