import { deleteCreatedBefore, type ChunkedDeleteOptions } from '../sql/chunked-delete.ts';
import type { Pool } from '../connection/pool.ts';

// lost_jobs (migration 0026): jobs the record lost. A failover to an
// asynchronous standby drops the last commits the old primary acknowledged,
// and with them the rows of jobs the API had accepted and queued; their queue
// entries survive in Redis. A worker whose claim finds no row at all for an
// entry (findJobsWithoutRow) records it here, and so does the API that
// accepted a job that ran and finished on the lost timeline (recent-accepts.ts),
// so that a poll of the id answers 410 JOB_LOST rather than 404 (invariant 12:
// what is lost is said, never silent).

/** A job the record lost, as its queue entry named it. */
export interface LostJob {
  id: string;
  model: string;
}

export interface LostJobRecord extends LostJob {
  lostAt: Date;
}

/**
 * Records jobs the record lost, in one statement; an id recorded already
 * (the entry of a batch that ran again after a crash) is kept as it was.
 * Returns the ids newly recorded.
 */
export async function recordLostJobs(pool: Pool, jobs: readonly LostJob[]): Promise<Set<string>> {
  if (jobs.length === 0) return new Set();
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO lost_jobs (id, model)
     SELECT id, model FROM jsonb_to_recordset($1::jsonb) AS l(id uuid, model text)
     ON CONFLICT (id) DO NOTHING
     RETURNING id::text`,
    [JSON.stringify(jobs.map((j) => ({ id: j.id, model: j.model })))],
  );
  return new Set(rows.map((r) => r.id));
}

/** A lost job by id; undefined when the record never lost it (or its row aged out). */
export async function findLostJob(pool: Pool, id: string): Promise<LostJobRecord | undefined> {
  const { rows } = await pool.query<{ id: string; model: string; lost_at: Date }>('SELECT id::text, model, lost_at FROM lost_jobs WHERE id = $1', [id]);
  const row = rows[0];
  return row ? { id: row.id, model: row.model, lostAt: row.lost_at } : undefined;
}

/** Deletes the lost jobs recorded before `before` (JOB_TOMBSTONE_RETENTION_S), in bounded chunks (deleteCreatedBefore); returns how many. */
export const deleteLostJobsBefore = (pool: Pool, before: Date, options?: ChunkedDeleteOptions): Promise<number> =>
  deleteCreatedBefore(pool, 'lost_jobs', before, options);
