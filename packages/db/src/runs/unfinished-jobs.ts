import type { Priority, StoredTensor } from '@inferq/contracts';
import type { Pool } from '../connection/pool.ts';
import { liveJobIds } from '../retention/job-floors.ts';
import { CLOCK_SLACK_MS, daysOf, idRangeSql } from '../sql/job-id-range.ts';
import { EXPIRE } from './run-fencing.ts';

// The passes over jobs not yet finished: deadlines, the reconciler's re-enqueue, priority aging.

/** Ends queued jobs whose deadline has passed, at most `limit` per call; returns them for their queue jobs to be removed. */
export async function expireOverdueJobs(pool: Pool, limit: number): Promise<Array<{ id: string; modelName: string }>> {
  const live = idRangeSql(await liveJobIds(pool));
  const { rows } = await pool.query<{ id: string; model_name: string }>(
    `UPDATE jobs SET ${EXPIRE}
      WHERE ${live} AND id IN (
        SELECT id FROM jobs WHERE ${live} AND status = 'queued' AND deadline_at <= now() ORDER BY deadline_at LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING id, model_name`,
    [limit],
  );
  return rows.map((r) => ({ id: r.id, modelName: r.model_name }));
}

export interface UnfinishedJob {
  id: string;
  modelName: string;
  modelVersion: number;
  priority: Priority;
  createdAt: Date;
  deadlineAt: Date | null;
  ownerKeyId: string;
}

export interface UnfinishedJobsPage {
  /** Only jobs at least this old: younger ones may still be between insert and enqueue. */
  minAgeMs: number;
  /** Only jobs created after this (the reconciler's incremental window); unset for every job. */
  createdAfter?: Date;
  /** Keyset cursor: the last row of the previous page. */
  after?: { createdAt: Date; id: string };
  limit: number;
}

/** Queued or running jobs, oldest first, a page at a time: candidates for re-enqueueing. */
export async function findUnfinishedJobs(pool: Pool, page: UnfinishedJobsPage): Promise<UnfinishedJob[]> {
  const since = page.after?.createdAt ?? page.createdAfter;
  const ids = since ? { fromMs: since.getTime() - CLOCK_SLACK_MS, toMs: Date.now() + CLOCK_SLACK_MS } : await liveJobIds(pool);
  const { rows } = await pool.query(
    `SELECT id, model_name, model_version, priority, created_at, deadline_at, owner_key_id FROM jobs
      WHERE ${idRangeSql(ids)} AND status IN ('queued', 'running') AND created_at < now() - make_interval(secs => $1::float8 / 1000)
        AND ($2::timestamptz IS NULL OR created_at > $2)
        AND ($3::timestamptz IS NULL OR (created_at, id) > ($3, $4::uuid))
      ORDER BY created_at, id LIMIT $5`,
    [page.minAgeMs, page.createdAfter ?? null, page.after?.createdAt ?? null, page.after?.id ?? null, page.limit],
  );
  return rows.map((r) => ({
    id: r.id,
    modelName: r.model_name,
    modelVersion: r.model_version,
    priority: r.priority,
    createdAt: r.created_at,
    deadlineAt: r.deadline_at,
    ownerKeyId: r.owner_key_id,
  }));
}

/**
 * Candidates for moving up a class: each key's `perKey` oldest queued jobs
 * of priority normal or low created before `olderThan`, per model, oldest
 * first within a key.
 */
export async function findAgedQueuedJobs(
  pool: Pool,
  o: { olderThan: Date; perKey: number },
): Promise<Array<{ id: string; modelName: string; priority: Priority; ownerKeyId: string; createdAt: Date }>> {
  const { rows } = await pool.query(
    `SELECT id, model_name, priority, owner_key_id, created_at FROM (
       SELECT id, model_name, priority, owner_key_id, created_at,
              row_number() OVER (PARTITION BY model_name, owner_key_id ORDER BY created_at, id) AS rank
         FROM jobs WHERE ${idRangeSql(await liveJobIds(pool))} AND status = 'queued' AND created_at < $1 AND priority IN ('normal', 'low')) aged
      WHERE rank <= $2
      ORDER BY model_name, owner_key_id, created_at, id`,
    [o.olderThan, o.perKey],
  );
  return rows.map((r) => ({ id: r.id, modelName: r.model_name, priority: r.priority, ownerKeyId: r.owner_key_id, createdAt: r.created_at }));
}

/** The input headers of the given jobs, by id (name, datatype, shape, bytes; not where the bytes are): what a re-enqueued job's batch key is made of. */
export async function readJobInputs(pool: Pool, ids: string[]): Promise<Map<string, StoredTensor[]>> {
  const { rows } = await pool.query<{ id: string; inputs: StoredTensor[] }>(
    `SELECT id, inputs FROM jobs WHERE id = ANY($1::uuid[]) AND ${idRangeSql(daysOf(ids))}`,
    [ids],
  );
  return new Map(rows.map((r) => [r.id, r.inputs.map(({ name, datatype, shape, bytes }) => ({ name, datatype, shape, bytes }))]));
}
