import type { Batch, JobStatus, Usage } from '@inferq/contracts';
import { deleteCreatedBefore, type ChunkedDeleteOptions } from '../sql/chunked-delete.ts';
import type { Pool } from '../connection/pool.ts';
import { jobIdsFinishedSince } from '../retention/job-floors.ts';
import { CLOCK_SLACK_MS, idRangeSql } from '../sql/job-id-range.ts';

// Batch provenance and device-time accounting (migration 0010).

export interface NewBatch {
  id: string;
  modelName: string;
  modelVersion: number;
  workerId: string;
  device: string;
  provider: string;
  size: number;
  items: number;
  startedAt: Date;
  inferMs: number;
}

/**
 * The INSERT that records batch `param` (a jsonb parameter, batchJson), with
 * the sha256 of the model version's artifact. Idempotent: a batch whose
 * results are stored again after an outage keeps its first row. completeJobs
 * runs it in the statement that writes the batch's results.
 */
export const insertBatchSql = (param: string): string =>
  `INSERT INTO batches (id, model_name, model_version, model_sha256, worker_id, device, provider, size, items, started_at, infer_ms)
   SELECT b.id, b.model_name, b.model_version, m.sha256, b.worker_id, b.device, b.provider, b.size, b.items, b.started_at, b.infer_ms
     FROM jsonb_to_record(${param}::jsonb) AS b(id uuid, model_name text, model_version int, worker_id text, device text, provider text,
                                              size int, items int, started_at timestamptz, infer_ms float8)
     JOIN models m ON m.name = b.model_name AND m.version = b.model_version
   ON CONFLICT (id) DO NOTHING`;

export const batchJson = (b: NewBatch): string =>
  JSON.stringify({
    id: b.id,
    model_name: b.modelName,
    model_version: b.modelVersion,
    worker_id: b.workerId,
    device: b.device,
    provider: b.provider,
    size: b.size,
    items: b.items,
    started_at: b.startedAt.toISOString(),
    infer_ms: b.inferMs,
  });

/** Records a batch that ran (insertBatchSql), on its own. */
export async function recordBatch(pool: Pool, b: NewBatch): Promise<void> {
  await pool.query(insertBatchSql('$1'), [batchJson(b)]);
}

/** A batch with its jobs, or undefined. */
export async function findBatch(pool: Pool, id: string): Promise<Batch | undefined> {
  const {
    rows: [b],
  } = await pool.query('SELECT * FROM batches WHERE id = $1', [id]);
  if (!b) return undefined;
  // Its jobs were created before it started, and finished (or will) after.
  const startedMs = (b.started_at as Date).getTime();
  const { rows: jobs } = await pool.query<{
    id: string;
    owner_key_id: string;
    status: JobStatus;
    items: number | null;
    queue_ms: number | null;
    device_ms: number | null;
  }>(
    `SELECT id, owner_key_id, status, items, queue_ms, device_ms FROM jobs
      WHERE ${idRangeSql(await jobIdsFinishedSince(pool, startedMs, startedMs + CLOCK_SLACK_MS))} AND batch_id = $1 ORDER BY created_at, id`,
    [id],
  );
  return {
    id: b.id,
    model: b.model_name,
    modelVersion: b.model_version,
    modelSha256: b.model_sha256,
    workerId: b.worker_id,
    device: b.device,
    provider: b.provider,
    size: b.size,
    items: b.items,
    startedAt: (b.started_at as Date).toISOString(),
    inferMs: b.infer_ms,
    jobs: jobs.map((j) => ({ id: j.id, ownerKeyId: j.owner_key_id, status: j.status, items: j.items ?? 0, queueMs: j.queue_ms, deviceMs: j.device_ms })),
  };
}

/**
 * Device time of the jobs that succeeded in [from, to), per API key or per
 * model version, largest first; `ownerKeyId` limits it to one key. One scan
 * of the finished_at range.
 */
export async function readUsage(
  pool: Pool,
  q: { from: Date; to: Date; groupBy: 'key' | 'model'; ownerKeyId: string | null },
): Promise<Pick<Usage, 'items' | 'total'>> {
  const group = q.groupBy === 'key' ? 'j.owner_key_id, k.name' : 'j.model_name, j.model_version';
  const { rows } = await pool.query(
    `SELECT ${group}, count(*)::int AS jobs, COALESCE(sum(j.items), 0)::int AS items, COALESCE(sum(j.device_ms), 0)::float8 AS device_ms
       FROM jobs j ${q.groupBy === 'key' ? 'JOIN api_keys k ON k.id = j.owner_key_id' : ''}
      WHERE ${idRangeSql(await jobIdsFinishedSince(pool, q.from.getTime(), q.to.getTime() + CLOCK_SLACK_MS), 'j.id')}
        AND j.finished_at >= $1 AND j.finished_at < $2 AND j.device_ms IS NOT NULL AND ($3::uuid IS NULL OR j.owner_key_id = $3)
      GROUP BY ${group}
      ORDER BY device_ms DESC`,
    [q.from, q.to, q.ownerKeyId],
  );
  const items = rows.map((r) => ({
    ...(q.groupBy === 'key'
      ? { keyId: r.owner_key_id as string, keyName: r.name as string }
      : { model: r.model_name as string, modelVersion: r.model_version as number }),
    jobs: r.jobs as number,
    items: r.items as number,
    deviceMs: r.device_ms as number,
  }));
  const total = items.reduce((t, i) => ({ jobs: t.jobs + i.jobs, items: t.items + i.items, deviceMs: t.deviceMs + i.deviceMs }), {
    jobs: 0,
    items: 0,
    deviceMs: 0,
  });
  return { items, total };
}

/**
 * Deletes the batches recorded before `before`, in bounded chunks
 * (deleteCreatedBefore); returns how many. A job's tombstone keeps its
 * batch_id, so the caller passes a bound no tombstone still stored can name:
 * every job of a batch was created before the batch was recorded.
 */
export const deleteBatchesCreatedBefore = (pool: Pool, before: Date, options?: ChunkedDeleteOptions): Promise<number> =>
  deleteCreatedBefore(pool, 'batches', before, options);
