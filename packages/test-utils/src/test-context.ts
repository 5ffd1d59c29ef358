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
  // The query timeout the stack's processes are given, if any, holds for the test's own statements too (a primary
  // that vanished must not hang a fault test's ledger).
  const queryTimeoutMs = env.DATABASE_QUERY_TIMEOUT_MS ? Number(env.DATABASE_QUERY_TIMEOUT_MS) : undefined;
  const pool = createPool({ url: env.DATABASE_URL!, schema: id, max: 10, queryTimeoutMs });
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
      await dropSchema(pool, id).catch(() => {});
      await pool.end();
      storage.close();
      await deleteRedisKeys(env.REDIS_URL!, env.QUEUE_PREFIX!);
    },
  };
}

/**
 * Drops a test's schema. A schema given a year of partitions (year-of-jobs.ts)
 * holds more relations than one transaction may lock (max_locks_per_transaction
 * 64 × connections), so its partitions go first, a hundred at a time.
 */
async function dropSchema(pool: Pool, schema: string): Promise<void> {
  // Foreign keys to a partitioned table (webhook_deliveries → jobs) would keep its partitions from going one by one.
  const keys = await pool.query<{ name: string; table: string }>(
    `SELECT k.conname AS name, k.conrelid::regclass::text AS table FROM pg_constraint k JOIN pg_class p ON p.oid = k.confrelid
      WHERE k.contype = 'f' AND k.conparentid = 0 AND p.relkind = 'p' AND p.relnamespace = to_regnamespace($1)`,
    [schema],
  );
  for (const k of keys.rows) await pool.query(`ALTER TABLE ${k.table} DROP CONSTRAINT "${k.name}"`);
  const { rows } = await pool.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind = 'r' AND c.relispartition`,
    [schema],
  );
  for (let i = 0; i < rows.length; i += 100) {
    await pool.query(
      `DROP TABLE ${rows
        .slice(i, i + 100)
        .map((r) => `"${schema}"."${r.name}"`)
        .join(', ')}`,
    );
  }
  await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
}
