import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, fillYearOfJobs, makePastJobPartitions, testBatchRun, testJobId, type TestContext } from '@inferq/test-utils';
import {
  claimDueWebhooks,
  completeJobs,
  DAY_MS,
  expireOverdueJobs,
  failJobs,
  findAgedQueuedJobs,
  findExpiredJobIds,
  findInputsToDrop,
  findJob,
  findUnfinishedJobs,
  listJobPartitions,
  listJobs,
  readJobBreakdown,
  readJobStats,
  readOldestQueuedAges,
  readUsage,
  type JobListQuery,
  type Pool,
} from '../src/index.ts';

// A year of partitions: what a poll, a list page, a batch's completion and
// every sweep touch is the partitions of the days they are about, not the
// hundreds a year of retention leaves (job-id-range.ts, job-floors.ts).
// Counted as the partitions of jobs a statement locks (each one it planned or
// ran on), inside a transaction: no timing. Each statement runs once first in
// a savepoint rolled back (its locks go with it), as a process that has been
// running would have found its floors already.

const DAYS = 400;

let t: TestContext;
let owner: string;
beforeAll(async () => {
  t = await createTestContext();
  owner = (
    await t.pool.query<{ id: string }>(
      `INSERT INTO api_keys (id, name, prefix, secret_hash, scopes) VALUES (gen_random_uuid(), 'year', 'yr', 'h', '{}') RETURNING id`,
    )
  ).rows[0]!.id;
  await makePastJobPartitions(t.pool, DAYS);
  await fillYearOfJobs(t.pool, { owner, days: DAYS, jobsPerDay: 20 });
}, 300_000);
afterAll(() => t?.close());

/** Runs `fn` in a transaction on one connection (after a rolled-back run), returns its result and how many partitions of jobs it locked. */
async function lockedPartitions<T>(fn: (pool: Pool) => Promise<T>): Promise<{ result: T; partitions: number }> {
  const client = await t.pool.connect();
  const pool = client as unknown as Pool;
  try {
    await client.query('BEGIN');
    await client.query('SAVEPOINT warm');
    await fn(pool);
    await client.query('ROLLBACK TO SAVEPOINT warm');
    const result = await fn(pool);
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(DISTINCT c.oid)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
        WHERE l.pid = pg_backend_pid() AND l.locktype = 'relation' AND c.relkind = 'r' AND c.relispartition
          AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) AND c.relname LIKE 'jobs%'`,
    );
    return { result, partitions: rows[0]!.n };
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

const recentIds = async (n: number) =>
  (await t.pool.query<{ id: string }>(`SELECT id FROM jobs WHERE status = 'succeeded' ORDER BY created_at DESC LIMIT $1`, [n])).rows.map((r) => r.id);

describe('a year of daily partitions', () => {
  it('has them, and jobs in them', async () => {
    expect((await listJobPartitions(t.pool)).length).toBeGreaterThan(DAYS);
    expect((await t.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs')).rows[0]!.n).toBeGreaterThan(DAYS * 20);
  });

  it('a poll plans and locks the partition of its job alone, its prepared plan too', async () => {
    const [id] = await recentIds(1);
    const { result, partitions } = await lockedPartitions(async (pool) => {
      // Past the five runs after which Postgres may switch a prepared statement to its generic plan.
      for (let i = 0; i < 7; i++) await findJob(pool, id!, null);
      return findJob(pool, id!, owner);
    });
    expect(result?.id).toBe(id);
    expect(partitions).toBe(1);
  });

  it('a page of recent jobs reads the partitions of a day or two', async () => {
    const { result, partitions } = await lockedPartitions((pool) => listJobs(pool, { ownerKeyId: null, limit: 11 }));
    expect(result.rows).toHaveLength(11);
    expect(partitions).toBeLessThanOrEqual(3);
  });

  it('a filter that matches nothing reads at most 32 days and the slack, and hands on a cursor', async () => {
    const { result, partitions } = await lockedPartitions((pool) => listJobs(pool, { ownerKeyId: null, errorCode: 'NO_SUCH_CODE', limit: 50 }));
    expect(result.rows).toEqual([]);
    expect(result.coveredFrom).not.toBeNull();
    expect(partitions).toBeLessThanOrEqual(34);
  });

  it('pages through every job once, newest first, across windows, short pages and jobs_legacy', async () => {
    const expected = (await t.pool.query<{ id: string }>(`SELECT id FROM jobs WHERE status = 'failed' ORDER BY created_at DESC, id DESC`)).rows.map(
      (r) => r.id,
    );
    expect(expected.length).toBeGreaterThan(DAYS);
    const seen: string[] = [];
    let before: JobListQuery['before'];
    for (let page = 0; page < 200; page++) {
      const { rows, coveredFrom } = await listJobs(t.pool, { ownerKeyId: null, status: 'failed', limit: 17, before });
      seen.push(...rows.map((r) => r.id));
      const last = rows.at(-1);
      if (rows.length === 17 && last) before = { createdAt: last.createdAt, id: last.id };
      else if (coveredFrom) before = { createdAt: coveredFrom, id: '00000000-0000-0000-0000-000000000000' };
      else break;
    }
    expect(seen).toEqual(expected);
  });

  it("a batch's completion and failure lock the partitions of its jobs' days alone", async () => {
    const ids = await recentIds(4);
    const batchId = testJobId();
    await t.pool.query(`UPDATE jobs SET status = 'running', batch_id = $2 WHERE id = ANY($1::uuid[])`, [ids, batchId]);
    const done = await lockedPartitions(async (pool) => {
      for (let i = 0; i < 7; i++)
        await completeJobs(pool, testBatchRun(testJobId()), [{ id: ids[0]!, attempt: 1, outputs: [], inferMs: 1, items: 1, deviceMs: 1 }]);
      return completeJobs(
        pool,
        testBatchRun(batchId),
        ids.slice(0, 2).map((id) => ({ id, attempt: 1, outputs: [], inferMs: 1, items: 1, deviceMs: 1 })),
      );
    });
    expect(done.result.size).toBe(2);
    expect(done.partitions).toBeLessThanOrEqual(2);
    const failed = await lockedPartitions((pool) =>
      failJobs(
        pool,
        ids.slice(2).map((id) => ({ id, code: 'INFERENCE_FAILED', message: 'x', final: true, attempt: 1 })),
        testBatchRun(batchId),
      ),
    );
    expect(failed.partitions).toBeLessThanOrEqual(2);
  });

  // The live jobs are in the last hour, unpurged ones in the last 7 days (and a day ahead for clock slack).
  const sweeps: Array<[string, (pool: Pool) => Promise<unknown>, number]> = [
    ['deadline expiry', (pool) => expireOverdueJobs(pool, 100), 3],
    ['reconciler, full pass', (pool) => findUnfinishedJobs(pool, { minAgeMs: 0, limit: 100 }), 3],
    ['reconciler, incremental pass', (pool) => findUnfinishedJobs(pool, { minAgeMs: 0, createdAfter: new Date(Date.now() - 60_000), limit: 100 }), 3],
    ['priority aging', (pool) => findAgedQueuedJobs(pool, { olderThan: new Date(), perKey: 10 }), 3],
    ['oldest queued ages', (pool) => readOldestQueuedAges(pool), 3],
    ['webhook claims', (pool) => claimDueWebhooks(pool, { limit: 10, maxAttempts: 5, leaseMs: 1_000 }), 3],
    ['retention candidates', (pool) => findExpiredJobIds(pool, { defaultRetentionS: 7 * 86_400, limit: 100 }), 10],
    ['input drop candidates', (pool) => findInputsToDrop(pool, { inputRetentionS: 3_600, limit: 100 }), 10],
    ['stats, last hour', (pool) => readJobStats(pool, { windowMinutes: 60, rateSeconds: 10, ownerKeyId: null }), 4],
    ['breakdown, last hour', (pool) => readJobBreakdown(pool, { windowMinutes: 60, ownerKeyId: null }), 4],
    ['usage, last 30 days', (pool) => readUsage(pool, { from: new Date(Date.now() - 30 * DAY_MS), to: new Date(), groupBy: 'model', ownerKeyId: null }), 33],
  ];
  it.each(sweeps)('%s locks the partitions that may hold its work, not the year', async (_, sweep, most) => {
    const { partitions } = await lockedPartitions(sweep);
    expect(partitions).toBeLessThanOrEqual(most);
  });

  it('the bounded sweeps find what the unbounded ones find', async () => {
    const usage = await readUsage(t.pool, { from: new Date(Date.now() - 30 * DAY_MS), to: new Date(), groupBy: 'model', ownerKeyId: null });
    const all = await t.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM jobs WHERE finished_at >= now() - interval '30 days' AND device_ms IS NOT NULL`,
    );
    expect(usage.total.jobs).toBe(all.rows[0]!.n);
    const unfinished = await findUnfinishedJobs(t.pool, { minAgeMs: 0, limit: 1_000 });
    const count = await t.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE status IN ('queued', 'running')`);
    expect(unfinished).toHaveLength(count.rows[0]!.n);
    const expired = await findExpiredJobIds(t.pool, { defaultRetentionS: 3 * 86_400, limit: 10_000 });
    const due = await t.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE purged_at IS NULL AND finished_at < now() - interval '3 days'`);
    expect(expired).toHaveLength(due.rows[0]!.n);
  });
});
