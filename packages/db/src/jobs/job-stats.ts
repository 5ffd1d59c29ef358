import type { Pool } from '../connection/pool.ts';
import { jobIdsFinishedSince, liveJobIds } from '../retention/job-floors.ts';
import { CLOCK_SLACK_MS, idRangeSql } from '../sql/job-id-range.ts';

export interface JobStatsPoint {
  at: Date;
  submitted: number;
  completed: number;
  failed: number;
  queueMsP50: number | null;
  queueMsP95: number | null;
  inferMsP50: number | null;
  inferMsP95: number | null;
  avgBatchSize: number | null;
}

export interface JobStats {
  /** One point per minute that saw any activity, oldest first. */
  series: JobStatsPoint[];
  /** The whole window (percentiles and batch size over every finished job in it). */
  window: Omit<JobStatsPoint, 'at'> & { queueMsP99: number | null; inferMsP99: number | null };
  /** Counts over the last `rateSeconds`, for per-second rates. */
  recent: { submitted: number; completed: number; failed: number };
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** The start of a window of whole minutes ending with this one (as the SQL computes it), less a minute for the two clocks. */
const windowStartMs = (minutes: number): number => (Math.floor(Date.now() / 60_000) - minutes) * 60_000;

/**
 * Submissions by creation minute and outcomes by finish minute over the last
 * `windowMinutes`, for one owner or (null) everyone. Both scans are index
 * range reads on created_at and finished_at.
 */
export async function readJobStats(pool: Pool, o: { windowMinutes: number; rateSeconds: number; ownerKeyId: string | null }): Promise<JobStats> {
  const since = `date_trunc('minute', now()) - make_interval(mins => $1::int - 1)`;
  const sinceMs = windowStartMs(o.windowMinutes);
  const created = idRangeSql({ fromMs: sinceMs - CLOCK_SLACK_MS, toMs: Date.now() + CLOCK_SLACK_MS });
  const finishedIds = idRangeSql(await jobIdsFinishedSince(pool, sinceMs));
  const [submitted, finished] = await Promise.all([
    pool.query(
      `SELECT date_trunc('minute', created_at) AS at, count(*)::int AS n,
              count(*) FILTER (WHERE created_at >= now() - make_interval(secs => $3::int))::int AS recent
         FROM jobs WHERE ${created} AND created_at >= ${since} AND ($2::uuid IS NULL OR owner_key_id = $2)
        GROUP BY 1`,
      [o.windowMinutes, o.ownerKeyId, o.rateSeconds],
    ),
    pool.query(
      `SELECT date_trunc('minute', finished_at) AS at,
              count(*) FILTER (WHERE status = 'succeeded')::int AS completed,
              count(*) FILTER (WHERE status = 'failed')::int AS failed,
              count(*) FILTER (WHERE status = 'succeeded' AND finished_at >= now() - make_interval(secs => $3::int))::int AS recent_completed,
              count(*) FILTER (WHERE status = 'failed' AND finished_at >= now() - make_interval(secs => $3::int))::int AS recent_failed,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY queue_ms) AS queue_p50,
              percentile_cont(0.95) WITHIN GROUP (ORDER BY queue_ms) AS queue_p95,
              percentile_cont(0.99) WITHIN GROUP (ORDER BY queue_ms) AS queue_p99,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY infer_ms) AS infer_p50,
              percentile_cont(0.95) WITHIN GROUP (ORDER BY infer_ms) AS infer_p95,
              percentile_cont(0.99) WITHIN GROUP (ORDER BY infer_ms) AS infer_p99,
              avg(batch_size) FILTER (WHERE status = 'succeeded') AS avg_batch
         FROM jobs
        WHERE ${finishedIds} AND finished_at >= ${since} AND status IN ('succeeded', 'failed') AND ($2::uuid IS NULL OR owner_key_id = $2)
        GROUP BY GROUPING SETS ((1), ())`,
      [o.windowMinutes, o.ownerKeyId, o.rateSeconds],
    ),
  ]);

  const points = new Map<number, JobStatsPoint>();
  const point = (at: Date): JobStatsPoint => {
    let p = points.get(at.getTime());
    if (!p)
      points.set(
        at.getTime(),
        (p = { at, submitted: 0, completed: 0, failed: 0, queueMsP50: null, queueMsP95: null, inferMsP50: null, inferMsP95: null, avgBatchSize: null }),
      );
    return p;
  };
  const recent = { submitted: 0, completed: 0, failed: 0 };
  for (const r of submitted.rows) {
    point(r.at).submitted = r.n;
    recent.submitted += r.recent;
  }
  let window: JobStats['window'] = {
    submitted: 0,
    completed: 0,
    failed: 0,
    queueMsP50: null,
    queueMsP95: null,
    queueMsP99: null,
    inferMsP50: null,
    inferMsP95: null,
    inferMsP99: null,
    avgBatchSize: null,
  };
  for (const r of finished.rows) {
    const figures = {
      completed: r.completed,
      failed: r.failed,
      queueMsP50: num(r.queue_p50),
      queueMsP95: num(r.queue_p95),
      inferMsP50: num(r.infer_p50),
      inferMsP95: num(r.infer_p95),
      avgBatchSize: num(r.avg_batch),
    };
    if (r.at === null) {
      window = { ...window, ...figures, queueMsP99: num(r.queue_p99), inferMsP99: num(r.infer_p99) };
      recent.completed = r.recent_completed;
      recent.failed = r.recent_failed;
    } else Object.assign(point(r.at), figures);
  }
  window.submitted = submitted.rows.reduce((n, r) => n + r.n, 0);
  return { series: [...points.values()].sort((a, b) => a.at.getTime() - b.at.getTime()), window, recent };
}

/** Age of the oldest queued job per model and priority (queued jobs only: the unfinished index covers them). */
export async function readOldestQueuedAges(pool: Pool): Promise<Array<{ model: string; priority: string; ageS: number }>> {
  const { rows } = await pool.query<{ model_name: string; priority: string; age_s: number }>(
    `SELECT model_name, priority, EXTRACT(EPOCH FROM now() - min(created_at))::float8 AS age_s
       FROM jobs WHERE ${idRangeSql(await liveJobIds(pool))} AND status = 'queued' GROUP BY model_name, priority`,
  );
  return rows.map((r) => ({ model: r.model_name, priority: r.priority, ageS: r.age_s }));
}

/** Finished-job figures of one model version, or of one worker, over a window. */
export interface JobBreakdown {
  completed: number;
  failed: number;
  queueMsP50: number | null;
  queueMsP95: number | null;
  queueMsP99: number | null;
  inferMsP50: number | null;
  inferMsP95: number | null;
  inferMsP99: number | null;
  avgBatchSize: number | null;
}

/**
 * The same figures as the window's, per model version and per worker, in one
 * scan of the finished_at range (GROUPING SETS: each row is one or the other).
 */
export async function readJobBreakdown(
  pool: Pool,
  o: { windowMinutes: number; ownerKeyId: string | null },
): Promise<{
  models: Array<JobBreakdown & { model: string; version: number }>;
  workers: Array<JobBreakdown & { workerId: string }>;
}> {
  const { rows } = await pool.query(
    `SELECT model_name, model_version, worker_id, GROUPING(model_name, model_version) = 0 AS by_model,
            count(*) FILTER (WHERE status = 'succeeded')::int AS completed,
            count(*) FILTER (WHERE status = 'failed')::int AS failed,
            percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY queue_ms) AS queue_p,
            percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY infer_ms) AS infer_p,
            avg(batch_size) FILTER (WHERE status = 'succeeded') AS avg_batch
       FROM jobs
      WHERE ${idRangeSql(await jobIdsFinishedSince(pool, windowStartMs(o.windowMinutes)))}
        AND finished_at >= date_trunc('minute', now()) - make_interval(mins => $1::int - 1)
        AND status IN ('succeeded', 'failed') AND ($2::uuid IS NULL OR owner_key_id = $2)
      GROUP BY GROUPING SETS ((model_name, model_version), (worker_id))`,
    [o.windowMinutes, o.ownerKeyId],
  );
  const figures = (r: Record<string, unknown>): JobBreakdown => {
    const q = (r.queue_p as Array<number | null> | null) ?? [];
    const i = (r.infer_p as Array<number | null> | null) ?? [];
    return {
      completed: r.completed as number,
      failed: r.failed as number,
      queueMsP50: num(q[0]),
      queueMsP95: num(q[1]),
      queueMsP99: num(q[2]),
      inferMsP50: num(i[0]),
      inferMsP95: num(i[1]),
      inferMsP99: num(i[2]),
      avgBatchSize: num(r.avg_batch),
    };
  };
  return {
    models: rows
      .filter((r) => r.by_model)
      .map((r) => ({ model: r.model_name, version: r.model_version, ...figures(r) }))
      .sort((a, b) => a.model.localeCompare(b.model) || a.version - b.version),
    // A job failed before any worker claimed it (expired, canceled) has no worker.
    workers: rows
      .filter((r) => !r.by_model && r.worker_id !== null)
      .map((r) => ({ workerId: r.worker_id, ...figures(r) }))
      .sort((a, b) => a.workerId.localeCompare(b.workerId)),
  };
}
