import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@inferq/core';
import { dropExpiredJobPartitions, ensureJobPartitions, insertJobs, jobPartitionName, listJobPartitions, type NewJob, type Pool } from '@inferq/db';
import { createRedisConnection } from '@inferq/queue';
import { createTestContext, newTestJob, testJobId, type TestContext } from '@inferq/test-utils';
import { createPartitionMaintainer } from '../src/background/partition-maintainer.ts';

// Dropping the daily partitions of jobs past the tombstone retention
// (dropExpiredJobPartitions). A fresh schema's jobs_legacy covers every day up
// to a week ahead, so the "past" days here are days far ahead, and olderThan
// lies beyond them.

const DAY_MS = 86_400_000;
const today = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS);
const daysAhead = (n: number) => new Date(today.getTime() + n * DAY_MS);
const at = (n: number) => new Date(daysAhead(n).getTime() + 3_600_000);

let ctx: TestContext;
let pool: Pool;
let owner: string;
beforeAll(async () => {
  ctx = await createTestContext();
  pool = ctx.pool;
  owner = (
    await pool.query<{ id: string }>(`INSERT INTO api_keys (id, name, prefix, secret_hash, scopes) VALUES ($1, 'k', 'p', 'h', '{}') RETURNING id`, [
      testJobId(),
    ])
  ).rows[0]!.id;
});
afterAll(() => ctx?.close());

const newJob = (day: number, over: Partial<NewJob> = {}): NewJob => newTestJob(owner, { id: testJobId(at(day)), ...over });
/** Inserts a job of day `day` with a key and a webhook delivery; finished unless `queued`. */
async function job(day: number, key: string, queued = false): Promise<string> {
  const j = newJob(day, { idempotencyKey: key, webhookUrl: 'http://127.0.0.1:9/h' });
  expect(await insertJobs(pool, [j])).toEqual(new Set([j.id]));
  if (!queued) await pool.query(`UPDATE jobs SET status = 'succeeded', finished_at = now() WHERE id = $1`, [j.id]);
  await pool.query(`INSERT INTO webhook_deliveries (id, job_id, attempt, url, status_code, duration_ms) VALUES (gen_random_uuid(), $1, 1, 'u', 200, 5)`, [
    j.id,
  ]);
  return j.id;
}
const count = async (sql: string, params: unknown[] = []) => (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params)).rows[0]!.n;
const names = async () => (await listJobPartitions(pool)).map((p) => p.name);

describe('dropping the daily partitions of jobs past the tombstone retention', () => {
  it('drops the days whose every id lies before olderThan, with their deliveries and keys; skips a day with a queued job; idempotent', async () => {
    expect(await ensureJobPartitions(pool, { aheadDays: 3, now: daysAhead(100) })).toEqual([100, 101, 102, 103].map((n) => jobPartitionName(daysAhead(n))));
    const legacy = await job(0, 'k-legacy');
    const old = [await job(100, 'k-100a'), await job(100, 'k-100b'), await job(102, 'k-102')];
    const queued = await job(101, 'k-101', true);
    const newer = await job(103, 'k-103');

    const result = await dropExpiredJobPartitions(pool, { olderThan: daysAhead(103) });
    const dropped = result.dropped.map((d) => d.name);
    expect(dropped).toContain(jobPartitionName(daysAhead(100)));
    expect(dropped).toContain(jobPartitionName(daysAhead(102)));
    // The partitions the migration created ahead (empty) are past it too.
    expect(dropped).toContain(jobPartitionName(daysAhead(7)));
    expect(dropped).not.toContain('jobs_legacy');
    expect(result.skipped).toEqual([{ name: jobPartitionName(daysAhead(101)), reason: 'holds a queued or running job' }]);
    for (const d of result.dropped) {
      expect(d.bytes).toBeGreaterThan(0);
      expect(d.detachMs).toBeGreaterThanOrEqual(0);
      expect(d.dropMs).toBeGreaterThanOrEqual(0);
    }

    expect(await names()).toEqual(['jobs_legacy', ...[101, 103].map((n) => jobPartitionName(daysAhead(n)))]);
    expect(await count(`pg_class c WHERE c.relname = $1 AND pg_table_is_visible(c.oid)`, [jobPartitionName(daysAhead(100))])).toBe(0);
    expect(await count('jobs WHERE id = ANY($1)', [old])).toBe(0);
    expect(await count('webhook_deliveries WHERE job_id = ANY($1)', [old])).toBe(0);
    expect(await count('job_idempotency WHERE job_id = ANY($1)', [old])).toBe(0);
    // The kept days, jobs_legacy and their deliveries and keys are untouched.
    const kept = [legacy, queued, newer];
    expect(await count('jobs WHERE id = ANY($1)', [kept])).toBe(3);
    expect(await count('webhook_deliveries WHERE job_id = ANY($1)', [kept])).toBe(3);
    expect(await count('job_idempotency WHERE job_id = ANY($1)', [kept])).toBe(3);
    // A key of a dropped day is free again.
    const again = newJob(103, { idempotencyKey: 'k-100a' });
    expect(await insertJobs(pool, [again])).toEqual(new Set([again.id]));

    // A second run drops nothing more and still skips the queued day.
    expect(await dropExpiredJobPartitions(pool, { olderThan: daysAhead(103) })).toEqual({ dropped: [], skipped: result.skipped });
    // Once its job finished, the day goes.
    await pool.query(`UPDATE jobs SET status = 'canceled', finished_at = now() WHERE id = $1`, [queued]);
    const later = await dropExpiredJobPartitions(pool, { olderThan: daysAhead(103) });
    expect(later.dropped.map((d) => d.name)).toEqual([jobPartitionName(daysAhead(101))]);
    expect(await count('jobs WHERE id = $1', [queued])).toBe(0);
  });

  it('finalizes a detach that was interrupted (detach pending), and drops a table detached but not dropped', async () => {
    await ensureJobPartitions(pool, { aheadDays: 1, now: daysAhead(200) });
    const [pending, orphan] = [200, 201].map((n) => jobPartitionName(daysAhead(n)));
    const finished = await job(200, 'k-200');
    await pool.query(`DELETE FROM webhook_deliveries WHERE job_id = $1`, [finished]);
    // A transaction that reads jobs makes DETACH … CONCURRENTLY wait in its second step; lock_timeout interrupts it there.
    const reader = await pool.connect();
    const detacher = await pool.connect();
    try {
      await reader.query('BEGIN');
      await reader.query('SELECT count(*) FROM jobs');
      await detacher.query(`SET lock_timeout = '100ms'`);
      await expect(detacher.query(`ALTER TABLE jobs DETACH PARTITION ${pending} CONCURRENTLY`)).rejects.toThrow(/lock timeout/);
      await reader.query('COMMIT');
      await detacher.query('RESET lock_timeout');
    } finally {
      reader.release();
      detacher.release();
    }
    const state = await pool.query(`SELECT inhdetachpending FROM pg_inherits WHERE inhrelid = $1::regclass`, [pending]);
    expect(state.rows).toEqual([{ inhdetachpending: true }]);
    await pool.query(`ALTER TABLE jobs DETACH PARTITION ${orphan}`);

    const result = await dropExpiredJobPartitions(pool, { olderThan: daysAhead(202) });
    expect(result.dropped.map((d) => d.name).sort()).toEqual([pending, orphan]);
    expect(await count(`pg_class c WHERE c.relname = ANY($1) AND pg_table_is_visible(c.oid)`, [[pending, orphan]])).toBe(0);
    expect(await count('jobs WHERE id = $1', [finished])).toBe(0);
  });

  it('the maintainer drops after ensuring, olderThan = now − the tombstone retention, under its lease', async () => {
    await ensureJobPartitions(pool, { aheadDays: 0, now: daysAhead(300) });
    const redis = createRedisConnection(ctx.env.REDIS_URL!, 'producer');
    await once(redis, 'ready');
    const counted: number[] = [];
    const maintainer = createPartitionMaintainer({
      pool,
      redis,
      prefix: ctx.prefix,
      logger: createLogger({ service: 'test', level: 'warn', pretty: false }),
      aheadDays: 7,
      tombstoneRetentionS: 86_400,
      onDropped: (n) => counted.push(n),
    });
    try {
      // The first test dropped day 7: the pass creates it again; nothing is a day old yet but jobs_legacy, which is never dropped.
      expect(await maintainer.runOnce()).toEqual([jobPartitionName(daysAhead(7))]);
      expect(counted).toEqual([]);
      // Two days after day 300: every day up to it goes.
      const result = await maintainer.dropExpired(daysAhead(302));
      expect(result.dropped.map((d) => d.name)).toEqual([7, 300].map((n) => jobPartitionName(daysAhead(n))));
      expect(counted).toEqual([2]);
      expect(await names()).toContain('jobs_legacy');
    } finally {
      redis.disconnect();
    }
  });
});

// A measurement, not a check: INFERQ_DROP_BENCH=1 npx vitest run apps/api/tests/job-partitions-drop.test.ts
// (figures in docs/operations.md, Partitions).
describe.skipIf(!process.env.INFERQ_DROP_BENCH)('dropping a day of 1,000,000 tombstones', () => {
  it('times DETACH CONCURRENTLY and DROP', { timeout: 300_000 }, async () => {
    const bench = await createTestContext();
    try {
      const key = (
        await bench.pool.query<{ id: string }>(`INSERT INTO api_keys (id, name, prefix, secret_hash, scopes) VALUES ($1, 'k', 'p', 'h', '{}') RETURNING id`, [
          testJobId(),
        ])
      ).rows[0]!.id;
      await ensureJobPartitions(bench.pool, { aheadDays: 0, now: daysAhead(50) });
      const start = performance.now();
      // Narrow finished rows with UUIDv7 ids spread over day 50 (like apps/bench's 5-depth scenario).
      await bench.pool.query(
        `INSERT INTO jobs (id, owner_key_id, model_name, model_version, priority, status, inputs, created_at, finished_at)
         SELECT (substr(h, 1, 8) || '-' || substr(h, 9, 4) || substr(gen_random_uuid()::text, 14))::uuid, $1, 'mlp', 1, 'normal', 'succeeded', '[]', t, t
           FROM generate_series(0, 999999) g,
                LATERAL (SELECT $2::timestamptz + g * interval '86 ms' AS t) ct,
                LATERAL (SELECT lpad(to_hex((extract(epoch FROM ct.t) * 1000)::bigint), 12, '0') AS h) c`,
        [key, daysAhead(50).toISOString()],
      );
      const insertMs = Math.round(performance.now() - start);
      await bench.pool.query(`ANALYZE ${jobPartitionName(daysAhead(50))}`);
      const result = await dropExpiredJobPartitions(bench.pool, { olderThan: daysAhead(51) });
      const day = result.dropped.find((d) => d.name === jobPartitionName(daysAhead(50)));
      console.log(JSON.stringify({ insertMs, ...day, mib: Math.round((day?.bytes ?? 0) / 1048576) }));
      expect(day?.rowsEstimate).toBeGreaterThan(900_000);
    } finally {
      await bench.close();
    }
  });
});
