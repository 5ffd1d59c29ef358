import { randomBytes } from 'node:crypto';
import { createPool, runMigrations, type Pool } from '@inferq/db';
import { createRedisConnection, deleteKeysWithPrefix } from '@inferq/queue';
import { createStorage, type Storage } from '@inferq/storage';
import { optionalTestVar, requiredTestVar as required, testRedisUrl } from './test-env.ts';

export interface TestContext {
  /** Unique per test file: Postgres schema, BullMQ prefix and S3 bucket share it. */
  id: string;
  pool: Pool;
  storage: Storage;
  prefix: string;
  /** Environment for processes started by the test (API, workers). */
  env: Record<string, string>;
  /** Drops the schema and removes the prefix's Redis keys. */
  close(): Promise<void>;
}

/** Removes every Redis key under `prefix` (queues, worker registry), so a shared Redis does not fill up run after run. */
export async function deleteRedisKeys(redisUrl: string, prefix: string): Promise<void> {
  const redis = createRedisConnection(redisUrl, 'consumer');
  try {
    await deleteKeysWithPrefix(redis, prefix);
  } finally {
    redis.disconnect();
  }
}

export interface TestContextOptions {
  /** Apply the migrations only up to this one (a rehearsal of the later ones on a schema that holds rows). */
  migrateUpTo?: string;
  /** Service variables that replace the shared ones (`DATABASE_URL`, `REDIS_URL`, `S3_*`): a private server's `env`. */
  services?: Record<string, string>;
}

/** A fresh, migrated Postgres schema, a Redis prefix and an S3 bucket for one test file. */
export async function createTestContext(options: TestContextOptions = {}): Promise<TestContext> {
  const id = `t${randomBytes(5).toString('hex')}`;
  const env: Record<string, string> = {
    DATABASE_URL: required('DATABASE_URL'),
    DATABASE_SCHEMA: id,
    REDIS_URL: testRedisUrl(),
    QUEUE_PREFIX: id,
    S3_ENDPOINT: required('S3_ENDPOINT'),
    S3_REGION: optionalTestVar('S3_REGION', 'us-east-1'),
    S3_BUCKET: id,
    S3_ACCESS_KEY_ID: optionalTestVar('S3_ACCESS_KEY_ID', ''),
    S3_SECRET_ACCESS_KEY: optionalTestVar('S3_SECRET_ACCESS_KEY', ''),
    S3_FORCE_PATH_STYLE: 'true',
    LOG_LEVEL: optionalTestVar('TEST_LOG_LEVEL', 'warn'),
    ...options.services,
  };
  const admin = createPool({ url: env.DATABASE_URL!, schema: 'public', max: 1 });
  await admin.query(`CREATE SCHEMA "${id}"`);
  await admin.end();
  const pool = createPool({ url: env.DATABASE_URL!, schema: id, max: 10 });
  await runMigrations(pool, undefined, { upTo: options.migrateUpTo });
  const storage = createStorage({
    endpoint: env.S3_ENDPOINT,
    region: env.S3_REGION!,
    bucket: id,
    accessKeyId: env.S3_ACCESS_KEY_ID,
    secretAccessKey: env.S3_SECRET_ACCESS_KEY,
    forcePathStyle: true,
  });
  await storage.ensureBucket();
  return {
    id,
    pool,
    storage,
    prefix: env.QUEUE_PREFIX!,
    env,
    async close() {
      await pool.query(`DROP SCHEMA "${id}" CASCADE`).catch(() => {});
      await pool.end();
      storage.close();
      await deleteRedisKeys(env.REDIS_URL!, env.QUEUE_PREFIX!);
    },
  };
}
