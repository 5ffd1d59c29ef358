import { createStorage, type Storage } from '@inferq/storage';
import type { Pool } from '@inferq/db';
import type { RedisClient } from '@inferq/queue';

/** What a stack holds at one moment: Postgres per table, the S3 bucket, Redis. */
export interface Footprint {
  /** Seconds since the run started. */
  atS: number;
  /** pg_total_relation_size (heap, TOAST, indexes) of every table of the schema; each partition of jobs under its own name. */
  tableBytes: Record<string, number>;
  /** Live and dead tuples per table (pg_stat_user_tables: what autovacuum has to go on). */
  liveTuples: Record<string, number>;
  deadTuples: Record<string, number>;
  /** Autovacuum passes per table so far. */
  autovacuums: Record<string, number>;
  /** Partitions of jobs (names), at this moment. */
  jobPartitions: string[];
  s3Objects: number;
  s3Bytes: number;
  /** INFO memory used_memory: the whole server (other users of a shared Redis included). */
  redisUsedBytes: number;
  /** MEMORY USAGE summed over the keys under the stack's prefix: this stack's own share. */
  redisPrefixBytes: number;
  redisPrefixKeys: number;
}

export interface FootprintSources {
  pool: Pool;
  redis: RedisClient;
  /** The stack's queue prefix: its Redis keys start with it. */
  prefix: string;
  /** The stack's S3 settings (S3_ENDPOINT, S3_REGION, S3_BUCKET, keys), as the API gets them. */
  s3Env: Record<string, string>;
}

async function tables(pool: Pool) {
  const { rows } = await pool.query<{ name: string; bytes: string; live: string; dead: string; vacuums: string; part: boolean }>(
    `SELECT c.relname AS name, pg_total_relation_size(c.oid) AS bytes, coalesce(s.n_live_tup, 0) AS live, coalesce(s.n_dead_tup, 0) AS dead,
            coalesce(s.autovacuum_count, 0) AS vacuums,
            EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = c.oid AND i.inhparent = to_regclass('jobs')) AS part
       FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
      WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) AND c.relkind = 'r'`,
  );
  return rows;
}

async function bucketBytes(storage: Storage): Promise<{ objects: number; bytes: number }> {
  let objects = 0;
  let bytes = 0;
  for await (const o of storage.listObjects('')) {
    objects++;
    bytes += o.sizeBytes;
  }
  return { objects, bytes };
}

async function prefixBytes(redis: RedisClient, prefix: string): Promise<{ keys: number; bytes: number }> {
  let keys = 0;
  let bytes = 0;
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (batch.length === 0) continue;
    const pipeline = redis.pipeline();
    for (const k of batch) pipeline.memory('USAGE', k);
    for (const [, used] of (await pipeline.exec()) ?? []) bytes += Number(used ?? 0);
    keys += batch.length;
  } while (cursor !== '0');
  return { keys, bytes };
}

/** Samples a stack's storage (one S3 client for the run: `close` it). */
export function createFootprintSampler(sources: FootprintSources) {
  const env = sources.s3Env;
  const storage = createStorage({
    endpoint: env.S3_ENDPOINT,
    region: env.S3_REGION ?? 'us-east-1',
    bucket: env.S3_BUCKET!,
    forcePathStyle: true,
    accessKeyId: env.S3_ACCESS_KEY_ID,
    secretAccessKey: env.S3_SECRET_ACCESS_KEY,
  });
  return {
    async sample(atS: number): Promise<Footprint> {
      const [rows, bucket, info, own] = await Promise.all([
        tables(sources.pool),
        bucketBytes(storage),
        sources.redis.info('memory'),
        prefixBytes(sources.redis, sources.prefix),
      ]);
      return {
        atS,
        tableBytes: Object.fromEntries(rows.map((r) => [r.name, Number(r.bytes)])),
        liveTuples: Object.fromEntries(rows.map((r) => [r.name, Number(r.live)])),
        deadTuples: Object.fromEntries(rows.map((r) => [r.name, Number(r.dead)])),
        autovacuums: Object.fromEntries(rows.map((r) => [r.name, Number(r.vacuums)])),
        jobPartitions: rows.filter((r) => r.part).map((r) => r.name),
        s3Objects: bucket.objects,
        s3Bytes: bucket.bytes,
        redisUsedBytes: Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0),
        redisPrefixBytes: own.bytes,
        redisPrefixKeys: own.keys,
      };
    },
    close: () => storage.close(),
  };
}
