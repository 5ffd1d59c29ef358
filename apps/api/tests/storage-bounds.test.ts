import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@inferq/core';
import {
  deleteAuditEntriesBefore,
  deleteBatchesCreatedBefore,
  ensureJobPartitions,
  JOB_PARTITION_STORAGE,
  JOB_PARTITION_TOAST_STORAGE,
  jobPartitionName,
  listJobPartitions,
  tuneJobPartitions,
  utcDayStart,
  type Pool,
} from '@inferq/db';
import { createRedisConnection } from '@inferq/queue';
import { createTestContext, type TestContext } from '@inferq/test-utils';
import { createPartitionMaintainer } from '../src/background/partition-maintainer.ts';

// What keeps storage bounded besides the job retention (issue #17): batches
// and audit_log deleted in bounded chunks past their retention, and the
// autovacuum parameters of the partitions of jobs.

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

let ctx: TestContext;
let pool: Pool;
beforeAll(async () => {
  ctx = await createTestContext();
  pool = ctx.pool;
});
afterAll(() => ctx?.close());

/** Inserts `n` batches recorded at `at`; returns their ids. */
async function batches(n: number, at: Date): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO batches (id, model_name, model_version, model_sha256, worker_id, device, provider, size, items, started_at, infer_ms, created_at)
     SELECT gen_random_uuid(), 'mlp', 1, 'sha', 'w', 'cpu', 'cpu', 1, 1, $2, 1, $2 FROM generate_series(1, $1::int) RETURNING id`,
    [n, at],
  );
  return rows.map((r) => r.id);
}
async function auditEntries(n: number, at: Date): Promise<void> {
  await pool.query(`INSERT INTO audit_log (action, resource, created_at) SELECT 'key.created', 'r', $2 FROM generate_series(1, $1::int)`, [n, at]);
}
const count = async (table: string, ids?: string[]) =>
  (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} ${ids ? 'WHERE id = ANY($1)' : ''}`, ids ? [ids] : [])).rows[0]!.n;
const reloptions = async (name: string) =>
  (await pool.query<{ o: string[] | null }>('SELECT reloptions AS o FROM pg_class WHERE oid = to_regclass($1)', [name])).rows[0]!.o ?? [];
/** The parameters of a table's TOAST table (set as `toast.<name>` on the table). */
const toastReloptions = async (name: string) =>
  (
    await pool.query<{ o: string[] | null }>(
      'SELECT t.reloptions AS o FROM pg_class c JOIN pg_class t ON t.oid = c.reltoastrelid WHERE c.oid = to_regclass($1)',
      [name],
    )
  ).rows[0]!.o ?? [];

describe('deleting batches and audit entries past their retention', () => {
  it('deletes oldest first, a bounded number of chunks a call, and nothing newer than the bound', async () => {
    const now = Date.now();
    const old = await batches(25, new Date(now - 10 * DAY_MS));
    const fresh = await batches(5, new Date(now));
    const before = new Date(now - DAY_MS);
    // Two chunks of 10 at most: 20 go, 5 wait for the next call, which stops at its short chunk.
    expect(await deleteBatchesCreatedBefore(pool, before, { chunkRows: 10, maxChunks: 2 })).toBe(20);
    expect(await count('batches', old)).toBe(5);
    expect(await deleteBatchesCreatedBefore(pool, before, { chunkRows: 10, maxChunks: 2 })).toBe(5);
    expect(await deleteBatchesCreatedBefore(pool, before)).toBe(0);
    expect(await count('batches', fresh)).toBe(5);

    await auditEntries(3, new Date(now - 10 * DAY_MS));
    await auditEntries(2, new Date(now));
    expect(await deleteAuditEntriesBefore(pool, before, { chunkRows: 2 })).toBe(3);
    expect(await count('audit_log')).toBe(2);
  });

  it('the maintainer deletes, under its lease, the batches before the oldest day kept less an hour and the audit entries past retention', async () => {
    await pool.query('TRUNCATE batches, audit_log, lost_jobs');
    const now = Date.now();
    // Tombstone retention of a day: the oldest day kept is yesterday's.
    const yesterday = utcDayStart(new Date(now - DAY_MS)).getTime();
    const gone = await batches(3, new Date(yesterday - 2 * HOUR_MS));
    const inMargin = await batches(2, new Date(yesterday - HOUR_MS / 2));
    const kept = await batches(1, new Date(now));
    await auditEntries(4, new Date(now - 3 * DAY_MS));
    await auditEntries(1, new Date(now - DAY_MS));
    // Records of lost jobs (jobs a failover dropped) age out with the tombstones: past JOB_TOMBSTONE_RETENTION_S.
    await pool.query(`INSERT INTO lost_jobs (id, model, lost_at) SELECT gen_random_uuid(), 'mlp', $2 FROM generate_series(1, $1::int)`, [
      2,
      new Date(now - 2 * DAY_MS),
    ]);
    await pool.query(`INSERT INTO lost_jobs (id, model) VALUES (gen_random_uuid(), 'mlp')`);
    const redis = createRedisConnection(ctx.env.REDIS_URL!, 'producer');
    await once(redis, 'ready');
    const counted: [string, number][] = [];
    const maintainer = createPartitionMaintainer({
      pool,
      redis,
      prefix: ctx.prefix,
      logger: createLogger({ service: 'test', level: 'warn', pretty: false }),
      aheadDays: 1,
      tombstoneRetentionS: 86_400,
      auditRetentionS: 2 * 86_400,
      onRowsDeleted: (table, n) => counted.push([table, n]),
    });
    try {
      await maintainer.runOnce();
      expect(await count('batches', gone)).toBe(0);
      expect(await count('batches', [...inMargin, ...kept])).toBe(3);
      expect(await count('audit_log')).toBe(1);
      expect(await count('lost_jobs')).toBe(1);
      expect(counted).toEqual([
        ['batches', 3],
        ['audit_log', 4],
        ['lost_jobs', 2],
      ]);

      // An older day the drop had to skip (a queued job in it) holds its batches back.
      const tenDaysAgo = utcDayStart(new Date(now - 10 * DAY_MS));
      const older = await batches(2, new Date(tenDaysAgo.getTime() - 2 * HOUR_MS));
      const ofSkipped = await batches(2, new Date(tenDaysAgo.getTime() + HOUR_MS));
      const skipped = [{ name: jobPartitionName(tenDaysAgo), reason: 'holds a queued or running job' }];
      expect(await maintainer.deleteBatches({ dropped: [], skipped })).toBe(2);
      expect(await count('batches', older)).toBe(0);
      expect(await count('batches', ofSkipped)).toBe(2);
    } finally {
      redis.disconnect();
    }
  });
});

describe('autovacuum parameters of the partitions of jobs', () => {
  const expected = Object.entries(JOB_PARTITION_STORAGE).map(([k, v]) => `${k}=${v}`);
  const expectedToast = Object.entries(JOB_PARTITION_TOAST_STORAGE).map(([k, v]) => `${k}=${v}`);
  const allNames = [...Object.keys(JOB_PARTITION_STORAGE), ...Object.keys(JOB_PARTITION_TOAST_STORAGE).map((k) => `toast.${k}`)];

  it('new days get them; existing partitions get the ones they lack, once, and a value set by hand stays', async () => {
    const day = new Date(Date.now() + 60 * DAY_MS);
    expect(await ensureJobPartitions(pool, { aheadDays: 0, now: day })).toEqual([jobPartitionName(day)]);
    expect(await reloptions(jobPartitionName(day))).toEqual(expected);
    expect(await toastReloptions(jobPartitionName(day))).toEqual(expectedToast);
    // Nothing on the partitioned parent: it takes no storage parameters.
    expect(await reloptions('jobs')).toEqual([]);

    // jobs_legacy and the days migration 0018 created, as a release before this one left them (the maintainer's pass above
    // tuned them); one of them has values of its own, on the table and on its TOAST table.
    const others = (await listJobPartitions(pool)).map((p) => p.name).filter((n) => n !== jobPartitionName(day));
    expect(others).toContain('jobs_legacy');
    for (const name of others) await pool.query(`ALTER TABLE ${name} RESET (${allNames.join(', ')})`);
    await pool.query('ALTER TABLE jobs_legacy SET (autovacuum_vacuum_scale_factor = 0.05, autovacuum_enabled = false, toast.autovacuum_freeze_min_age = 1000)');
    expect((await tuneJobPartitions(pool)).sort()).toEqual(others.sort());
    for (const name of others.filter((n) => n !== 'jobs_legacy')) {
      expect(await reloptions(name)).toEqual(expected);
      expect(await toastReloptions(name)).toEqual(expectedToast);
    }
    expect((await reloptions('jobs_legacy')).sort()).toEqual(
      ['autovacuum_vacuum_scale_factor=0.05', 'autovacuum_enabled=false', ...expected.filter((o) => !o.startsWith('autovacuum_vacuum_scale'))].sort(),
    );
    expect((await toastReloptions('jobs_legacy')).sort()).toEqual(
      ['autovacuum_freeze_min_age=1000', ...expectedToast.filter((o) => !o.startsWith('autovacuum_freeze_min_age'))].sort(),
    );
    expect(await tuneJobPartitions(pool)).toEqual([]);
  });
});

// A measurement, not a check: INFERQ_BATCH_DELETE_BENCH=1 npx vitest run --project inferq apps/api/tests/storage-bounds.test.ts
// (figures in docs/operations.md, Batches and the audit log).
describe.skipIf(!process.env.INFERQ_BATCH_DELETE_BENCH)('deleting 1,000,000 batches', () => {
  it('times each chunk of 10,000 and the whole', { timeout: 600_000 }, async () => {
    const bench = await createTestContext();
    try {
      const start = Date.now() - 500 * DAY_MS;
      let t = performance.now();
      // One a second for 1,000,000 s (11.6 days), 400 days ago; 100,000 newer ones stay.
      await bench.pool.query(
        `INSERT INTO batches (id, model_name, model_version, model_sha256, worker_id, device, provider, size, items, started_at, infer_ms, created_at)
         SELECT gen_random_uuid(), 'mlp', 1, repeat('a', 64), 'worker-1', 'cpu', 'cpu', 32, 32, ts, 12.5, ts
           FROM generate_series(0, 1099999) g, LATERAL (SELECT $1::timestamptz + g * interval '1 s' AS ts) x`,
        [new Date(start)],
      );
      await bench.pool.query('VACUUM ANALYZE batches');
      const insertMs = Math.round(performance.now() - t);
      const bytes = async () => Number((await bench.pool.query<{ b: string }>(`SELECT pg_total_relation_size('batches') AS b`)).rows[0]!.b);
      const bytesBefore = await bytes();
      const before = new Date(start + 1_000_000 * 1000);
      const chunks: number[] = [];
      t = performance.now();
      for (;;) {
        const c = performance.now();
        const n = await deleteBatchesCreatedBefore(bench.pool, before, { maxChunks: 1 });
        chunks.push(performance.now() - c);
        if (n < 10_000) break;
      }
      const totalMs = Math.round(performance.now() - t);
      const sorted = [...chunks].sort((a, b) => a - b);
      const q = (p: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!);
      const left = Number((await bench.pool.query<{ n: string }>('SELECT count(*) AS n FROM batches')).rows[0]!.n);
      console.log(
        JSON.stringify({ insertMs, mib: Math.round(bytesBefore / 1048576), chunks: chunks.length, totalMs, p50: q(0.5), p90: q(0.9), max: q(1), left }),
      );
      expect(left).toBe(100_000);
    } finally {
      await bench.close();
    }
  });
});
