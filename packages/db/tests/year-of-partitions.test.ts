import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, testJobId, type TestContext } from '@inferq/test-utils';
import {
  completeJobs,
  DAY_MS,
  ensureJobPartitions,
  failJobs,
  findJob,
  listJobs,
  listJobPartitions,
  type JobListQuery,
  type Pool,
  type PoolClient,
} from '../src/index.ts';

// A year of partitions: the statements a poll, a list page and a batch's
// completion run touch the partitions of the days they are about, not the
// hundreds a year of retention leaves (job-id-range.ts). Counted as the
// relations of jobs a statement locks (each partition and index it planned
// or ran on), inside a transaction: no timing.

const DAYS = 400;
const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
/** The walk's "now": far enough ahead that the days it reads are daily partitions. */
const now = new Date(today + 300 * DAY_MS);
const dayAt = (n: number) => new Date(today + n * DAY_MS);

let t: TestContext;
let owner: string;
beforeAll(async () => {
  t = await createTestContext();
  owner = (
    await t.pool.query<{ id: string }>(
      `INSERT INTO api_keys (id, name, prefix, secret_hash, scopes) VALUES (gen_random_uuid(), 'year', 'yr', 'h', '{}') RETURNING id`,
    )
  ).rows[0]!.id;
  await ensureJobPartitions(t.pool, { aheadDays: DAYS });
  // Jobs every 20 minutes over days 240-300 ahead, one in 40 failed; and one a year back, in jobs_legacy.
  await insertJobs(t.pool, now, 60 * 72, 20 * 60_000);
  await insertJobs(t.pool, dayAt(-365), 1, 60_000);
}, 300_000);
afterAll(() => t?.close());

async function insertJobs(pool: Pool, from: Date, count: number, stepMs: number): Promise<void> {
  const ids = Array.from({ length: count }, (_, i) => testJobId(new Date(from.getTime() - (i + 1) * stepMs)));
  await pool.query(
    `INSERT INTO jobs (id, owner_key_id, model_name, model_version, priority, status, inputs, created_at, finished_at, error_code)
     SELECT id, $2, 'mlp', 1, 'normal', CASE WHEN n % 40 = 0 THEN 'failed' ELSE 'succeeded' END, '[]', t, t,
            CASE WHEN n % 40 = 0 THEN 'INFERENCE_FAILED' END
       FROM (SELECT id, n, to_timestamp(('x' || lpad(replace(substr(id::text, 1, 13), '-', ''), 16, '0'))::bit(64)::bigint / 1000.0) AS t
               FROM unnest($1::uuid[]) WITH ORDINALITY AS u(id, n)) s`,
    [ids, owner],
  );
}

/** Runs `fn` in a transaction on one connection, returns what it returned and how many partitions of jobs it locked. */
async function lockedPartitions<T>(fn: (pool: Pool) => Promise<T>): Promise<{ result: T; partitions: number }> {
  const client: PoolClient = await t.pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client as unknown as Pool);
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
        WHERE l.pid = pg_backend_pid() AND l.locktype = 'relation' AND c.relkind = 'r' AND c.relispartition
          AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) AND c.relname LIKE 'jobs%'`,
    );
    return { result, partitions: rows[0]!.n };
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

describe('a year of daily partitions', () => {
  it('has them', async () => {
    expect((await listJobPartitions(t.pool)).length).toBeGreaterThan(DAYS - 10);
  });

  it('a poll plans and locks the partition of its job alone, its prepared plan too', async () => {
    const id = (await t.pool.query<{ id: string }>(`SELECT id FROM jobs WHERE created_at < $1 ORDER BY created_at DESC LIMIT 1`, [now])).rows[0]!.id;
    const { result, partitions } = await lockedPartitions(async (pool) => {
      // Past the five runs after which Postgres may switch a prepared statement to its generic plan.
      for (let i = 0; i < 7; i++) await findJob(pool, id, null);
      return findJob(pool, id, owner);
    });
    expect(result?.id).toBe(id);
    expect(partitions).toBe(1);
  });

  it('a page of recent jobs reads the partitions of a day or two', async () => {
    const { result, partitions } = await lockedPartitions((pool) => listJobs(pool, { ownerKeyId: null, limit: 51, now }));
    expect(result.rows).toHaveLength(51);
    expect(partitions).toBeLessThanOrEqual(3);
  });

  it('a filter that matches nothing reads at most 31 days and a few of slack, and hands on a cursor', async () => {
    const q: JobListQuery = { ownerKeyId: null, errorCode: 'NO_SUCH_CODE', limit: 50, now };
    const { result, partitions } = await lockedPartitions((pool) => listJobs(pool, q));
    expect(result.rows).toEqual([]);
    expect(result.coveredFrom?.getTime()).toBe(now.getTime() + 3_600_000 - 31 * DAY_MS);
    expect(partitions).toBeLessThanOrEqual(33);
  });

  it('pages through every job once, newest first, across windows, short pages and the year-old job', async () => {
    const expected = (await t.pool.query<{ id: string }>(`SELECT id FROM jobs WHERE status = 'failed' ORDER BY created_at DESC, id DESC`)).rows.map(
      (r) => r.id,
    );
    expect(expected.length).toBeGreaterThan(50);
    const seen: string[] = [];
    let before: JobListQuery['before'];
    for (let page = 0; page < 100; page++) {
      const { rows, coveredFrom } = await listJobs(t.pool, { ownerKeyId: null, status: 'failed', limit: 17, now, before });
      seen.push(...rows.map((r) => r.id));
      const last = rows.at(-1);
      if (rows.length === 17 && last) before = { createdAt: last.createdAt, id: last.id };
      else if (coveredFrom) before = { createdAt: coveredFrom, id: '00000000-0000-0000-0000-000000000000' };
      else break;
    }
    expect(seen).toEqual(expected);
  });

  it("a batch's completion and failure lock the partitions of its jobs' days alone", async () => {
    const ids = (await t.pool.query<{ id: string }>(`SELECT id FROM jobs WHERE created_at < $1 ORDER BY created_at DESC LIMIT 4`, [now])).rows.map((r) => r.id);
    const batchId = testJobId();
    await t.pool.query(`UPDATE jobs SET status = 'running', batch_id = $2 WHERE id = ANY($1::uuid[])`, [ids, batchId]);
    const done = await lockedPartitions(async (pool) => {
      for (let i = 0; i < 7; i++) await completeJobs(pool, testJobId(), [{ id: ids[0]!, outputs: [], inferMs: 1, items: 1, deviceMs: 1 }]);
      return completeJobs(
        pool,
        batchId,
        ids.slice(0, 2).map((id) => ({ id, outputs: [], inferMs: 1, items: 1, deviceMs: 1 })),
      );
    });
    expect(done.result.size).toBe(2);
    expect(done.partitions).toBeLessThanOrEqual(2);
    const failed = await lockedPartitions((pool) =>
      failJobs(
        pool,
        ids.slice(2).map((id) => ({ id, code: 'INFERENCE_FAILED', message: 'x', final: true, batchId })),
      ),
    );
    expect(failed.partitions).toBeLessThanOrEqual(2);
  });
});
