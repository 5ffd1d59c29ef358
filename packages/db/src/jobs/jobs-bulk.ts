import type { JobStatus } from '@inferq/contracts';
import { jobFilterConditions, type JobFilter } from './job-filter.ts';
import { liveJobIds } from '../retention/job-floors.ts';
import { idRangeSql } from '../sql/job-id-range.ts';
import type { Pool } from '../connection/pool.ts';

/** What a bulk action found: how many jobs matched in all, and the ones it acted on (at most its limit, oldest first). */
export interface BulkJobMatch<T> {
  matched: number;
  jobs: T[];
}

/**
 * The filter's conditions narrowed to jobs in one of these statuses; to the
 * partitions that may hold unfinished jobs when the statuses are all unfinished
 * ones (job-floors.ts). Finished jobs, tombstones included, may lie anywhere.
 */
async function conditions(pool: Pool, filter: JobFilter, statuses: readonly JobStatus[], params: unknown[]): Promise<string> {
  const where = jobFilterConditions(filter, params);
  params.push(statuses);
  where.push(`status = ANY($${params.length}::text[])`);
  if (statuses.every((s) => s === 'queued' || s === 'running')) where.push(idRangeSql(await liveJobIds(pool)));
  return where.join(' AND ');
}

/** How many jobs match the filter in one of these statuses (a dry run). */
export async function countJobsMatching(pool: Pool, filter: JobFilter, statuses: readonly JobStatus[]): Promise<number> {
  const params: unknown[] = [];
  const { rows } = await pool.query(`SELECT count(*)::int AS matched FROM jobs WHERE ${await conditions(pool, filter, statuses, params)}`, params);
  return rows[0].matched as number;
}

/**
 * Cancels up to `limit` queued jobs matching the filter, oldest first, in one
 * statement. Rows a worker holds at that moment are skipped (`SKIP LOCKED`),
 * not waited for: it is starting them. `matched` counts every queued match,
 * the ones past the limit included.
 */
export async function cancelQueuedJobsMatching(pool: Pool, filter: JobFilter, limit: number): Promise<BulkJobMatch<{ id: string; modelName: string }>> {
  const params: unknown[] = [];
  const where = await conditions(pool, filter, ['queued'], params);
  params.push(limit);
  const { rows } = await pool.query(
    `WITH picked AS (
       SELECT id FROM jobs WHERE ${where}
        ORDER BY created_at, id
        LIMIT $${params.length}
        FOR UPDATE SKIP LOCKED),
     canceled AS (
       UPDATE jobs j SET status = 'canceled', finished_at = now()
         FROM picked WHERE j.id = picked.id AND ${idRangeSql(await liveJobIds(pool), 'j.id')} AND j.status = 'queued'
        RETURNING j.id, j.model_name)
     SELECT (SELECT count(*)::int FROM jobs WHERE ${where}) AS matched,
            (SELECT coalesce(json_agg(json_build_object('id', id, 'modelName', model_name)), '[]'::json) FROM canceled) AS jobs`,
    params,
  );
  return { matched: rows[0].matched as number, jobs: rows[0].jobs as Array<{ id: string; modelName: string }> };
}

/** The ids of up to `limit` jobs matching the filter in one of these statuses, oldest first, and how many match in all (one snapshot). */
export async function findJobIdsMatching(pool: Pool, filter: JobFilter, statuses: readonly JobStatus[], limit: number): Promise<BulkJobMatch<string>> {
  const params: unknown[] = [];
  const where = await conditions(pool, filter, statuses, params);
  params.push(limit);
  const { rows } = await pool.query(
    `SELECT (SELECT count(*)::int FROM jobs WHERE ${where}) AS matched,
            ARRAY(SELECT id::text FROM jobs WHERE ${where} ORDER BY created_at, id LIMIT $${params.length}) AS ids`,
    params,
  );
  return { matched: rows[0].matched as number, jobs: rows[0].ids as string[] };
}
