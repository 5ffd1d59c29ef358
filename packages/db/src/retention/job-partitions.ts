import { DAY_MS, idAt } from '../sql/job-id-range.ts';
import { withTransaction, type Pool, type PoolClient } from '../connection/pool.ts';

// jobs is partitioned by RANGE (id) (migration 0018). Job ids are UUIDv7: the
// first 48 bits are the Unix time in ms, so the uuid whose first 48 bits are
// a day's start and whose other bits are 0 sorts below every id of that day
// and above every id of the day before. The first partition, jobs_legacy,
// holds everything below the bound migration 0016 chose; after it come
// daily partitions jobs_pYYYYMMDD, [day, next day), which the API creates
// ahead of time. There is no DEFAULT partition (every later CREATE would
// scan it): an insert with no partition fails, loudly.

/** Serialises the creators (API replicas at start), in one database. */
const LOCK_ID = 72_707_317;

/** The start (00:00 UTC) of the day `at` falls in. */
export const utcDayStart = (at: Date): Date => new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);

/** The lowest UUIDv7 of the UTC day `day` falls in: the range bound of that day's partition. */
export const dayBound = (day: Date): string => idAt(utcDayStart(day).getTime());

/** The name of the partition of the UTC day `day` falls in: jobs_pYYYYMMDD. */
export const jobPartitionName = (day: Date): string => `jobs_p${utcDayStart(day).toISOString().slice(0, 10).replaceAll('-', '')}`;

export interface JobPartition {
  name: string;
  /** Lowest id it holds (a dayBound); null: MINVALUE (jobs_legacy). */
  from: string | null;
  /** Its ids lie below this one; null: MAXVALUE. */
  to: string | null;
  /** The planner's row count (pg_class.reltuples); null before its first ANALYZE. */
  rowsEstimate: number | null;
  /** Table, indexes and TOAST. */
  bytes: number;
}

const boundValue = (text: string): string | null => (/^(MINVALUE|MAXVALUE)$/.test(text) ? null : text.replace(/^'|'$/g, ''));

/** The time a partition bound (a UUIDv7 prefix) stands for. */
export const boundTime = (bound: string): Date => new Date(parseInt(bound.replace(/-/g, '').slice(0, 12), 16));

export type JobPartitionBounds = Pick<JobPartition, 'name' | 'from' | 'to'>;

const boundsOf = (r: { name: string; bound: string }): JobPartitionBounds => {
  const m = /FROM \((.+)\) TO \((.+)\)/.exec(r.bound);
  return { name: r.name, from: m ? boundValue(m[1]!) : null, to: m ? boundValue(m[2]!) : null };
};
const byFrom = (a: JobPartitionBounds, b: JobPartitionBounds) => ((a.from ?? '') < (b.from ?? '') ? -1 : 1);

/**
 * jobs' partitions in id (time) order, their bounds only: a catalog read, no
 * size (a year in, summing 400 partitions' sizes costs 100 ms). Empty while
 * jobs is not partitioned.
 */
export async function listJobPartitionBounds(pool: Pool | PoolClient, days: { from?: Date; before?: Date } = {}): Promise<JobPartitionBounds[]> {
  // `days`: only the daily partitions of those days (their names sort as their days), and every other one (jobs_legacy).
  const { rows } = await pool.query<{ name: string; bound: string }>(
    `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = to_regclass('jobs')
        AND (c.relname !~ '^jobs_p[0-9]{8}$' OR (($1::text IS NULL OR c.relname >= $1) AND ($2::text IS NULL OR c.relname < $2)))`,
    [days.from ? jobPartitionName(days.from) : null, days.before ? jobPartitionName(days.before) : null],
  );
  return rows.map(boundsOf).sort(byFrom);
}

/** jobs' partitions in id (time) order, with their sizes; empty while jobs is not partitioned (before migration 0018). */
export async function listJobPartitions(pool: Pool | PoolClient): Promise<JobPartition[]> {
  const { rows } = await pool.query<{ name: string; bound: string; rows: string; bytes: string }>(
    `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound, c.reltuples::bigint AS rows, pg_total_relation_size(c.oid) AS bytes
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = to_regclass('jobs')`,
  );
  return rows
    .map((r) => {
      const rowsEstimate = Number(r.rows);
      return { ...boundsOf(r), rowsEstimate: rowsEstimate < 0 ? null : rowsEstimate, bytes: Number(r.bytes) };
    })
    .sort(byFrom);
}

/** Whether [from, to) overlaps a partition's range (uuid order is the order of their lower-case text). */
const overlaps = (p: JobPartitionBounds, from: string, to: string): boolean => (p.from === null || p.from < to) && (p.to === null || from < p.to);

/**
 * Creates the daily partitions of jobs from today's (UTC) to `aheadDays`
 * days ahead that are missing, with JOB_PARTITION_STORAGE; days an existing partition already covers
 * (jobs_legacy covers the days up to its bound) are left alone. Returns the
 * names created. Idempotent and safe to run from several replicas at once
 * (an advisory lock serialises them; each re-reads what exists). Each day is
 * created as a plain table and then attached: ATTACH takes SHARE UPDATE
 * EXCLUSIVE on jobs, which reads and writes do not wait for (CREATE TABLE …
 * PARTITION OF would take ACCESS EXCLUSIVE), and lock_timeout makes it give
 * up rather than queue behind a long transaction: the next run tries again.
 * Does nothing before jobs is partitioned.
 */
export async function ensureJobPartitions(pool: Pool, options: { aheadDays: number; now?: Date; lockTimeoutMs?: number }): Promise<string[]> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ kind: string | null }>(`SELECT (SELECT relkind::text FROM pg_class WHERE oid = to_regclass('jobs')) AS kind`);
    if (rows[0]?.kind !== 'p') return [];
    await client.query(`SELECT set_config('lock_timeout', $1, true)`, [`${options.lockTimeoutMs ?? 5_000}ms`]);
    await client.query('SELECT pg_advisory_xact_lock($1)', [LOCK_ID]);
    const today = utcDayStart(options.now ?? new Date()).getTime();
    const existing = await listJobPartitionBounds(client, { from: new Date(today) });
    const created: string[] = [];
    for (let n = 0; n <= options.aheadDays; n++) {
      const day = new Date(today + n * DAY_MS);
      const from = dayBound(day);
      const to = dayBound(new Date(day.getTime() + DAY_MS));
      if (existing.some((p) => overlaps(p, from, to))) continue;
      const name = jobPartitionName(day);
      await client.query(
        `CREATE TABLE ${name} (LIKE jobs INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE) WITH (${storageClause(PARTITION_STORAGE)})`,
      );
      await client.query(`ALTER TABLE jobs ATTACH PARTITION ${name} FOR VALUES FROM ('${from}') TO ('${to}')`);
      created.push(name);
    }
    return created;
  });
}

/**
 * Storage parameters of every partition of jobs (storage parameters belong to
 * the leaf partitions: the partitioned parent takes none). Each job is updated
 * up to four times (a slow batch's running mark, result, input drop, purge) and none of them can be HOT:
 * each changes a column an index covers or filters on (status, finished_at,
 * inputs, purged_at, input_sha256), so fillfactor would buy nothing. A day's
 * partition reaches millions of rows, where the default scale factor (0.2)
 * lets a fifth of them pile up as dead tuples before autovacuum comes; with
 * these, a vacuum comes after 10,000 + 2 % of the rows (80,000 at 3.5 million,
 * minutes of churn at 40 jobs/s) and an analyze after 2 %. Lower would scan
 * the partition's dozen indexes more often for little space.
 */
export const JOB_PARTITION_STORAGE: Readonly<Record<string, string>> = {
  autovacuum_vacuum_scale_factor: '0.02',
  autovacuum_vacuum_threshold: '10000',
  autovacuum_analyze_scale_factor: '0.02',
};
/**
 * Storage parameters of each partition's TOAST table, where a job's inline inputs over about 2 KB live (set as
 * `toast.<name>` on the partition). Each TOAST page is written once at submit and, left to the defaults, imaged whole in
 * the WAL again by the freeze that comes a day or so later at a fleet's transaction rate (the first change of a page
 * after a checkpoint writes its full image: a 12 KiB input's 12 KB again; docs/performance.md, "A job's WAL over its
 * life"). These have autovacuum come to the day's new TOAST pages every 10,000 chunks (about 1,400 12 KiB inputs) or
 * autovacuum_naptime, whichever is later, unthrottled (its work is the pages just written, still in shared buffers) and
 * freezing what it finds: most pages are frozen before the next checkpoint, when freezing them logs a few bytes a
 * tuple rather than the page.
 */
export const JOB_PARTITION_TOAST_STORAGE: Readonly<Record<string, string>> = {
  autovacuum_vacuum_insert_threshold: '10000',
  autovacuum_vacuum_insert_scale_factor: '0',
  autovacuum_freeze_min_age: '0',
  autovacuum_vacuum_cost_delay: '0',
};
/** Every parameter of a partition by the name ALTER TABLE takes: its own, and its TOAST table's with `toast.`. */
const PARTITION_STORAGE: Readonly<Record<string, string>> = {
  ...JOB_PARTITION_STORAGE,
  ...Object.fromEntries(Object.entries(JOB_PARTITION_TOAST_STORAGE).map(([k, v]) => [`toast.${k}`, v])),
};
const storageClause = (params: Record<string, string>): string =>
  Object.entries(params)
    .map(([k, v]) => `${k} = ${v}`)
    .join(', ');

/**
 * Sets JOB_PARTITION_STORAGE and JOB_PARTITION_TOAST_STORAGE on the partitions of jobs that lack any of them
 * (jobs_legacy, the days migration 0018 created, days created before this
 * release); a parameter a partition already has (set by hand) is left as it
 * is. Returns the partitions changed. Idempotent; ALTER TABLE … SET takes
 * SHARE UPDATE EXCLUSIVE on the one partition (reads and writes go on), under
 * the creators' advisory lock and lock_timeout. Does nothing before jobs is
 * partitioned.
 */
export async function tuneJobPartitions(pool: Pool, options: { lockTimeoutMs?: number } = {}): Promise<string[]> {
  return withTransaction(pool, async (client) => {
    await client.query(`SELECT set_config('lock_timeout', $1, true)`, [`${options.lockTimeoutMs ?? 5_000}ms`]);
    await client.query('SELECT pg_advisory_xact_lock($1)', [LOCK_ID]);
    // A TOAST table's parameters are its own reloptions, named without the `toast.` ALTER TABLE gives them.
    const { rows } = await client.query<{ name: string; options: string[] | null; toastOptions: string[] | null }>(
      `SELECT c.relname AS name, c.reloptions AS options, t.reloptions AS "toastOptions"
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid LEFT JOIN pg_class t ON t.oid = c.reltoastrelid
        WHERE i.inhparent = to_regclass('jobs') AND c.relkind = 'r' AND NOT i.inhdetachpending ORDER BY c.relname`,
    );
    const tuned: string[] = [];
    const names = (options: string[] | null, prefix = '') => (options ?? []).map((o) => prefix + o.slice(0, o.indexOf('=')));
    for (const r of rows) {
      const has = new Set([...names(r.options), ...names(r.toastOptions, 'toast.')]);
      const missing = Object.fromEntries(Object.entries(PARTITION_STORAGE).filter(([k]) => !has.has(k)));
      if (Object.keys(missing).length === 0) continue;
      await client.query(`ALTER TABLE ${r.name} SET (${storageClause(missing)})`);
      tuned.push(r.name);
    }
    return tuned;
  });
}

export interface DroppedJobPartition {
  name: string;
  /** The planner's row count before the drop; null: never analysed. */
  rowsEstimate: number | null;
  bytes: number;
  /** Time to detach (DETACH … CONCURRENTLY, or FINALIZE of a pending one; 0 for a table already detached). */
  detachMs: number;
  dropMs: number;
}

export interface DropJobPartitionsResult {
  dropped: DroppedJobPartition[];
  /** Past partitions left in place: they still hold a queued or running job. */
  skipped: { name: string; reason: string }[];
}

const DAILY = /^jobs_p\d{8}$/;
/** The day a daily partition's name (jobs_pYYYYMMDD) stands for; an invalid Date for another name. */
export const jobPartitionDay = (name: string): Date => new Date(`${name.slice(6, 10)}-${name.slice(10, 12)}-${name.slice(12, 14)}T00:00:00Z`);

/**
 * Drops the daily partitions of jobs whose every id lies before `olderThan`
 * (their upper bound is at or below dayBound(olderThan)): by then their jobs
 * are tombstones (job-retention.ts), and the whole day goes at once. A
 * partition that still holds a queued or running job is skipped (and
 * reported). jobs_legacy is never dropped here: it is dropped by hand once
 * everything in it is past the retention (docs/operations.md, Partitions).
 *
 * Per partition: its jobs' webhook_deliveries (their foreign key would block
 * the detach) and job_idempotency rows go first, by job_id range; then
 * DETACH PARTITION … CONCURRENTLY (SHARE UPDATE EXCLUSIVE on jobs, so reads
 * and writes go on; it cannot run in a transaction block, hence a plain
 * client without BEGIN) and DROP TABLE. An interrupted DETACH CONCURRENTLY
 * leaves the partition "detach pending": the next run finalizes it (DETACH
 * … FINALIZE); a table detached whose DROP did not happen is dropped then too.
 * Serialised with ensureJobPartitions by the same advisory lock (held for the
 * session here). Does nothing before jobs is partitioned.
 */
export async function dropExpiredJobPartitions(pool: Pool, options: { olderThan: Date; lockTimeoutMs?: number }): Promise<DropJobPartitionsResult> {
  const result: DropJobPartitionsResult = { dropped: [], skipped: [] };
  const limit = dayBound(options.olderThan);
  const client = await pool.connect();
  let locked = false;
  try {
    const { rows } = await client.query<{ kind: string | null }>(`SELECT (SELECT relkind::text FROM pg_class WHERE oid = to_regclass('jobs')) AS kind`);
    if (rows[0]?.kind !== 'p') return result;
    await client.query(`SELECT set_config('lock_timeout', $1, false)`, [`${options.lockTimeoutMs ?? 5_000}ms`]);
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_ID]);
    locked = true;

    const timed = async (sql: string): Promise<number> => {
      const start = performance.now();
      await client.query(sql);
      return Math.round(performance.now() - start);
    };
    const drop = async (p: { name: string; rowsEstimate: number | null; bytes: number }, detachMs: number) =>
      result.dropped.push({ ...p, detachMs, dropMs: await timed(`DROP TABLE ${p.name}`) });

    // Tables a previous run detached but did not drop: daily names in jobs' schema that are no partition.
    const orphans = await client.query<{ name: string; rows: string; bytes: string }>(
      `SELECT c.relname AS name, c.reltuples::bigint AS rows, pg_total_relation_size(c.oid) AS bytes
         FROM pg_class c
        WHERE c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = to_regclass('jobs')) AND c.relkind = 'r'
          AND c.relname ~ '^jobs_p[0-9]{8}$' AND NOT c.relispartition`,
    );
    for (const o of orphans.rows) {
      const next = new Date(jobPartitionDay(o.name).getTime() + DAY_MS);
      if (Number.isNaN(next.getTime()) || dayBound(next) > limit) continue;
      const rowsEstimate = Number(o.rows);
      await drop({ name: o.name, rowsEstimate: rowsEstimate < 0 ? null : rowsEstimate, bytes: Number(o.bytes) }, 0);
    }

    const pending = new Set(
      (
        await client.query<{ name: string }>(
          `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = to_regclass('jobs') AND i.inhdetachpending`,
        )
      ).rows.map((r) => r.name),
    );
    for (const bounds of await listJobPartitionBounds(client, { before: new Date(boundTime(limit).getTime() + DAY_MS) })) {
      if (!DAILY.test(bounds.name) || bounds.from === null || bounds.to === null || bounds.to > limit) continue;
      const size = await client.query<{ rows: string; bytes: string }>(
        `SELECT reltuples::bigint AS rows, pg_total_relation_size(oid) AS bytes FROM pg_class WHERE oid = to_regclass($1)`,
        [bounds.name],
      );
      const rowsEstimate = Number(size.rows[0]?.rows ?? -1);
      const p = { ...bounds, rowsEstimate: rowsEstimate < 0 ? null : rowsEstimate, bytes: Number(size.rows[0]?.bytes ?? 0) };
      if (pending.has(p.name)) {
        // Its rows are already out of jobs' reads; only the catalog step is left.
        await drop(p, await timed(`ALTER TABLE jobs DETACH PARTITION ${p.name} FINALIZE`));
        continue;
      }
      const busy = await client.query(`SELECT 1 FROM ${p.name} WHERE status IN ('queued', 'running') LIMIT 1`);
      if (busy.rowCount) {
        result.skipped.push({ name: p.name, reason: 'holds a queued or running job' });
        continue;
      }
      await client.query('DELETE FROM webhook_deliveries WHERE job_id >= $1 AND job_id < $2', [p.from, p.to]);
      await client.query('DELETE FROM job_idempotency WHERE job_id >= $1 AND job_id < $2', [p.from, p.to]);
      await drop(p, await timed(`ALTER TABLE jobs DETACH PARTITION ${p.name} CONCURRENTLY`));
    }
    return result;
  } finally {
    // A connection that cannot release the session lock is closed instead of going back to the pool (closing releases it).
    let broken = false;
    if (locked) await client.query('SELECT pg_advisory_unlock($1)', [LOCK_ID]).catch(() => (broken = true));
    await client.query('RESET lock_timeout').catch(() => (broken = true));
    client.release(broken);
  }
}
