import { dayBound, DAY_MS, jobPartitionName, listJobPartitions, type Pool } from '@inferq/db';

// A year in a box: a migrated schema given the daily partitions and rows that
// `days` of running leave behind, for the tests and the bench scenario that
// measure whether history costs anything. jobs_legacy shrinks to the time
// before them (in a fresh schema it is empty and covers the past up to a week
// ahead), and a daily partition is made for each day from `days` back to
// today; those ahead stay as the API made them.

export interface YearOfJobsOptions {
  owner: string;
  days: number;
  jobsPerDay: number;
  /** Jobs older than this are tombstones (purged by retention), younger ones finished and whole. @default 7 */
  retentionDays?: number;
  /** Queued and running jobs of the last hour. @default 10 */
  liveJobs?: number;
  model?: string;
}

/** Gives jobs_legacy's days since `days` ago to daily partitions; returns how many were made. */
export async function makePastJobPartitions(pool: Pool, days: number): Promise<number> {
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const first = today - days * DAY_MS;
  const parts = await listJobPartitions(pool);
  const legacy = parts.find((p) => p.name === 'jobs_legacy');
  if (!legacy?.to) throw new Error('jobs has no jobs_legacy partition to shrink');
  const legacyTo = new Date(parseInt(legacy.to.replace(/-/g, '').slice(0, 12), 16));
  await pool.query('ALTER TABLE jobs DETACH PARTITION jobs_legacy');
  await pool.query(`ALTER TABLE jobs ATTACH PARTITION jobs_legacy FOR VALUES FROM (MINVALUE) TO ('${dayBound(new Date(first))}')`);
  let made = 0;
  for (let at = first; at < legacyTo.getTime(); at += DAY_MS) {
    const day = new Date(at);
    await pool.query(`CREATE TABLE ${jobPartitionName(day)} PARTITION OF jobs FOR VALUES FROM ('${dayBound(day)}') TO ('${dayBound(new Date(at + DAY_MS))}')`);
    made++;
  }
  return made;
}

/** A UUIDv7 in SQL for the timestamptz expression `at`, random below its time bits. */
const V7 = (at: string) =>
  `(lpad(to_hex((extract(epoch FROM ${at}) * 1000)::bigint), 12, '0') || '7' || substr(md5(random()::text), 1, 3) || '8'
    || substr(md5(random()::text), 1, 15))::uuid`;

/**
 * Fills the days with jobs in the proportions retention leaves: tombstones
 * before the retention, finished jobs (one in 20 failed) after it, and queued
 * and running ones in the last hour, each with its finish a second after its
 * creation. One statement a day.
 */
export async function fillYearOfJobs(pool: Pool, o: YearOfJobsOptions): Promise<void> {
  const retentionDays = o.retentionDays ?? 7;
  const model = o.model ?? 'mlp';
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  for (let d = o.days; d >= 0; d--) {
    const dayStart = new Date(today - d * DAY_MS);
    const span = d === 0 ? Date.now() - 3_600_000 - dayStart.getTime() : DAY_MS;
    const purged = d > retentionDays;
    await pool.query(
      `INSERT INTO jobs (id, owner_key_id, model_name, model_version, priority, status, inputs, created_at, started_at, finished_at,
                         queue_ms, infer_ms, items, device_ms, batch_size, error_code, purged_at, purge_reason)
       SELECT ${V7('t')}, $1, $2, 1, 'normal', CASE WHEN g % 20 = 0 THEN 'failed' ELSE 'succeeded' END, '[]', t, t, t + interval '1 second',
              5, 2.5, 1, 2.5, 8, CASE WHEN g % 20 = 0 THEN 'INFERENCE_FAILED' END,
              CASE WHEN $5 THEN t + interval '${retentionDays} days' END, CASE WHEN $5 THEN 'retention' END
         FROM (SELECT g, $3::timestamptz + (g * $4::float8 / ${o.jobsPerDay}) * interval '1 millisecond' AS t
                 FROM generate_series(0, ${o.jobsPerDay - 1}) g) s`,
      [o.owner, model, dayStart, span, purged],
    );
  }
  await pool.query(
    `INSERT INTO jobs (id, owner_key_id, model_name, model_version, priority, status, inputs, created_at)
     SELECT ${V7('t')}, $1, $2, 1, 'normal', CASE WHEN g % 2 = 0 THEN 'queued' ELSE 'running' END, '[]', t
       FROM (SELECT g, now() - g * interval '1 minute' AS t FROM generate_series(1, $3::int) g) s`,
    [o.owner, model, o.liveJobs ?? 10],
  );
  // Vacuumed and analysed, as a table that has run a year would be: no autovacuum of the fill in what is measured next.
  await pool.query('VACUUM (ANALYZE) jobs');
}
