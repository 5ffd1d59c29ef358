import type { Priority, StoredTensor } from '@inferq/contracts';
import { packTensorRows, rowDataSql, unpackTensors } from './inline-tensors.ts';
import { prepared } from './prepared.ts';
import { copyRows, literal } from './copy-rows.ts';
import { CLOCK_SLACK_MS, daysOf, idRangeSql } from './job-id-range.ts';
import type { Pool } from './pool.ts';
import { liveJobIds } from './job-floors.ts';

// The worker side of the jobs table: claiming, settling, reconciling.

export interface StartBatch {
  ids: string[];
  workerId: string;
  batchId: string;
  batchSize: number;
}

const EXPIRE = `status = 'expired', finished_at = now(), error_code = 'DEADLINE_EXCEEDED', error_message = 'still queued at its deadline'`;

/**
 * Marks a batch's jobs running and returns the jobs still worth running, with
 * their inputs: jobs canceled or already finished (a retried batch after a
 * crash) are left out, so a result is never computed twice into a finished
 * job; queued jobs past their deadline end `expired` here instead of running.
 * Read as a binary COPY (copy-rows.ts), so the inputs' bytes come as they are,
 * not as hex; its values are literals, as COPY takes no parameters.
 */
export async function startJobs(pool: Pool, b: StartBatch): Promise<Map<string, ClaimedJobRow>> {
  if (!Number.isInteger(b.batchSize)) throw new TypeError(`batch size ${b.batchSize} is not an integer`);
  // The day range besides the literal ids, so that the planner prunes before it plans, whatever it makes of the array.
  const claimed = `id = ANY(ARRAY[${b.ids.map(literal).join(',')}]::uuid[]) AND ${idRangeSql(daysOf(b.ids))}`;
  // The two updates touch disjoint rows (now() is one instant per statement).
  const rows = await copyRows(
    pool,
    `WITH expired AS (
       UPDATE jobs SET ${EXPIRE} WHERE ${claimed} AND status = 'queued' AND deadline_at <= now())
     UPDATE jobs SET status = 'running', started_at = now(), attempts = attempts + 1, worker_id = ${literal(b.workerId)},
            batch_id = ${literal(b.batchId)}::uuid, batch_size = ${b.batchSize},
            queue_ms = GREATEST(0, (EXTRACT(EPOCH FROM (now() - created_at)) * 1000)::int)
      WHERE ${claimed} AND status IN ('queued', 'running') AND NOT (status = 'queued' AND deadline_at IS NOT NULL AND deadline_at <= now())
      RETURNING id::text, attempts::int4, inputs::text, input_data, array_to_json(node_faults)::text`,
  );
  return new Map(
    rows.map(([id, attempts, inputs, data, faults]) => [
      id!.toString(),
      {
        attempts: attempts!.readInt32BE(0),
        inputs: unpackTensors(JSON.parse(inputs!.toString()) as StoredTensor[], data),
        nodeFaults: JSON.parse(faults!.toString()) as string[],
      },
    ]),
  );
}

export interface ClaimedJobRow {
  attempts: number;
  inputs: StoredTensor[];
  /** Workers that gave the job back for a fault of their own. */
  nodeFaults: string[];
}

/**
 * Gives claimed jobs back after a fault of the worker's own: queued again as
 * if this claim never happened (its attempt not counted), the worker added to
 * the job's node faults and the fault kept as its last error. Fenced by the
 * claim like completeJobs; returns the ids given back.
 */
export async function releaseJobs(
  pool: Pool,
  batchId: string,
  workerId: string,
  jobs: Array<{ id: string; code: string; message: string }>,
): Promise<Set<string>> {
  if (jobs.length === 0) return new Set();
  const { rows } = await pool.query<{ id: string }>(
    `UPDATE jobs SET status = 'queued', attempts = GREATEST(0, attempts - 1), started_at = NULL, error_code = r.code, error_message = r.message,
            node_faults = node_faults || $3::text
       FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, code text, message text)
      WHERE jobs.id = r.id AND ${idRangeSql(daysOf(jobs.map((j) => j.id)), 'jobs.id')} AND jobs.status = 'running' AND jobs.batch_id = $2::uuid
      RETURNING jobs.id`,
    [JSON.stringify(jobs.map((j) => ({ ...j, message: j.message.slice(0, 2000) }))), batchId, workerId],
  );
  return new Set(rows.map((r) => r.id));
}

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

export interface JobSuccess {
  id: string;
  outputs: StoredTensor[];
  inferMs: number;
  /** Rows the job put along the batch dimension. */
  items: number;
  /** Its share of the batch's device time: inferMs × items ÷ the batch's items. */
  deviceMs: number;
}

/**
 * Writes a batch's results in one statement (the inline output bytes of all
 * the jobs as one binary parameter, each row taking its slice). Fenced by the claim: only jobs
 * still running in this batch change, so a replay is a no-op, and a worker
 * whose jobs were claimed again elsewhere (its lock expired while it was cut
 * off) cannot write over the newer attempt. Returns the ids written.
 */
export async function completeJobs(pool: Pool, batchId: string, results: JobSuccess[]): Promise<Set<string>> {
  if (results.length === 0) return new Set();
  const packed = packTensorRows(results.map((r) => r.outputs));
  const { rows } = await pool.query<{ id: string }>(
    prepared(
      `UPDATE jobs SET status = 'succeeded', outputs = r.outputs, output_data = ${rowDataSql('$3', 'r')}, infer_ms = r.infer_ms, items = r.items,
            device_ms = r.device_ms, finished_at = now(), error_code = NULL, error_message = NULL
       FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, outputs jsonb, infer_ms float8, items int, device_ms float8, data_at int, data_len int)
      WHERE jobs.id = r.id AND ${idRangeSql(daysOf(results.map((r) => r.id)), 'jobs.id')} AND jobs.status = 'running' AND jobs.batch_id = $2::uuid
      RETURNING jobs.id`,
      [
        JSON.stringify(
          results.map((r, i) => {
            const { tensors, dataAt, dataLen } = packed.rows[i]!;
            return { id: r.id, outputs: tensors, infer_ms: r.inferMs, items: r.items, device_ms: r.deviceMs, data_at: dataAt, data_len: dataLen };
          }),
        ),
        batchId,
        packed.data,
      ],
    ),
  );
  return new Set(rows.map((r) => r.id));
}

/**
 * Ends claimed jobs that cannot finish by their deadline, before they run:
 * `expired` with DEADLINE_EXCEEDED, like a job still queued at its deadline.
 */
export async function expireRunningJobs(pool: Pool, batchId: string, jobs: Array<{ id: string; message: string }>): Promise<void> {
  if (jobs.length === 0) return;
  await pool.query(
    `UPDATE jobs SET status = 'expired', finished_at = now(), error_code = 'DEADLINE_EXCEEDED', error_message = e.message
       FROM jsonb_to_recordset($1::jsonb) AS e(id uuid, message text)
      WHERE jobs.id = e.id AND ${idRangeSql(daysOf(jobs.map((j) => j.id)), 'jobs.id')} AND jobs.status = 'running' AND jobs.batch_id = $2::uuid`,
    [JSON.stringify(jobs), batchId],
  );
}

export interface JobFailure {
  id: string;
  code: string;
  message: string;
  /** false: record the error but leave the job queued for its next attempt. */
  final: boolean;
  /** The batch that claimed the job: the failure is written only while the job is still running in it (fenced like completeJobs). */
  batchId?: string;
}

export async function failJobs(pool: Pool, failures: JobFailure[]): Promise<void> {
  if (failures.length === 0) return;
  const rows = failures.map((f) => ({ id: f.id, code: f.code, message: f.message.slice(0, 2000), final: f.final, batch_id: f.batchId ?? null }));
  await pool.query(
    `UPDATE jobs SET status = CASE WHEN f.final THEN 'failed' ELSE 'queued' END,
            finished_at = CASE WHEN f.final THEN now() ELSE NULL END,
            error_code = f.code, error_message = f.message
       FROM jsonb_to_recordset($1::jsonb) AS f(id uuid, code text, message text, final boolean, batch_id uuid)
      WHERE jobs.id = f.id AND ${idRangeSql(daysOf(failures.map((f) => f.id)), 'jobs.id')}
        AND CASE WHEN f.batch_id IS NULL THEN jobs.status IN ('queued', 'running') ELSE jobs.status = 'running' AND jobs.batch_id = f.batch_id END`,
    [JSON.stringify(rows)],
  );
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
         FROM jobs WHERE ${idRangeSql(await liveJobIds(pool))} AND status = 'queued' AND created_at < $1 AND priority <> 'high') aged
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
