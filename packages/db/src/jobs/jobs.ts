import type { JobStatus, Priority, PurgeReason, StoredTensor } from '@inferq/contracts';
import { daysOf, idRangeSql } from '../sql/job-id-range.ts';
import { CLAIM_IDEMPOTENCY_KEYS } from './job-idempotency.ts';
import { prepared } from '../sql/prepared.ts';
import { packTensorRows, rowDataSql, unpackTensors } from '../sql/inline-tensors.ts';
import type { Pool } from '../connection/pool.ts';

export interface JobRecord {
  id: string;
  ownerKeyId: string;
  modelName: string;
  modelVersion: number;
  priority: Priority;
  status: JobStatus;
  idempotencyKey: string | null;
  requestHash: string | null;
  inputs: StoredTensor[];
  outputs: StoredTensor[] | null;
  errorCode: string | null;
  errorMessage: string | null;
  attempts: number;
  workerId: string | null;
  batchId: string | null;
  batchSize: number | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  queueMs: number | null;
  inferMs: number | null;
  deadlineAt: Date | null;
  webhookUrl: string | null;
  metadata: Record<string, string>;
  /** sha256 of the input tensors, on jobs of versions with the response cache on. */
  inputSha256: string | null;
  /** A cache hit: the job whose stored result this one reused. */
  cachedFrom: string | null;
  /** Rows the job put along its batch's batch dimension. */
  items: number | null;
  /** Its share of the batch's device time. */
  deviceMs: number | null;
  /** Keep the inputs as long as the job (asked at submit); otherwise they go after JOB_INPUT_RETENTION_S. */
  keepInputs: boolean;
  /** When the job was purged to a tombstone, and why. */
  purgedAt: Date | null;
  purgeReason: PurgeReason | null;
  /** When its input tensors were dropped (inputs is then []). */
  inputsDroppedAt: Date | null;
  /** From the job's batch row (findJob only): where it ran. */
  batch?: { device: string; provider: string; modelSha256: string };
}

const COLUMNS = `id, owner_key_id, model_name, model_version, priority, status, idempotency_key, request_hash, inputs, outputs, input_data, output_data,
  error_code, error_message, attempts, worker_id, batch_id, batch_size, created_at, started_at, finished_at, queue_ms, infer_ms,
  deadline_at, webhook_url, metadata,
  input_sha256, cached_from, items, device_ms, keep_inputs, purged_at, purge_reason, inputs_dropped_at`;
/**
 * Columns for one job's view: its input tensors' descriptions without their
 * bytes (a view shows name, type, shape and size; a poll of a CNN job would
 * otherwise carry its 12 KiB input from Postgres, as hex, every time).
 */
const VIEW_COLUMNS = COLUMNS.replace('input_data,', 'NULL::bytea AS input_data,');
/** Columns for lists: everything but the tensors. */
export const SUMMARY_COLUMNS = COLUMNS.replace(
  'inputs, outputs, input_data, output_data,',
  "'[]'::jsonb AS inputs, NULL::jsonb AS outputs, NULL::bytea AS input_data, NULL::bytea AS output_data,",
);

type JobRow = Record<string, unknown>;
export const toRecord = (r: JobRow): JobRecord => ({
  id: r.id as string,
  ownerKeyId: r.owner_key_id as string,
  modelName: r.model_name as string,
  modelVersion: r.model_version as number,
  priority: r.priority as Priority,
  status: r.status as JobStatus,
  idempotencyKey: r.idempotency_key as string | null,
  requestHash: r.request_hash as string | null,
  inputs: unpackTensors(r.inputs as StoredTensor[], r.input_data as Buffer | null),
  outputs: r.outputs ? unpackTensors(r.outputs as StoredTensor[], r.output_data as Buffer | null) : null,
  errorCode: r.error_code as string | null,
  errorMessage: r.error_message as string | null,
  attempts: r.attempts as number,
  workerId: r.worker_id as string | null,
  batchId: r.batch_id as string | null,
  batchSize: r.batch_size as number | null,
  createdAt: r.created_at as Date,
  startedAt: r.started_at as Date | null,
  finishedAt: r.finished_at as Date | null,
  queueMs: r.queue_ms as number | null,
  inferMs: r.infer_ms as number | null,
  deadlineAt: r.deadline_at as Date | null,
  webhookUrl: r.webhook_url as string | null,
  metadata: r.metadata as Record<string, string>,
  inputSha256: r.input_sha256 as string | null,
  cachedFrom: r.cached_from as string | null,
  items: r.items as number | null,
  deviceMs: r.device_ms as number | null,
  keepInputs: r.keep_inputs as boolean,
  purgedAt: r.purged_at as Date | null,
  purgeReason: r.purge_reason as PurgeReason | null,
  inputsDroppedAt: r.inputs_dropped_at as Date | null,
  ...(typeof r.device === 'string' ? { batch: { device: r.device, provider: r.provider as string, modelSha256: r.model_sha256 as string } } : {}),
});

export interface NewJob {
  id: string;
  ownerKeyId: string;
  modelName: string;
  modelVersion: number;
  priority: Priority;
  idempotencyKey: string | null;
  requestHash: string | null;
  inputs: StoredTensor[];
  metadata: Record<string, string>;
  deadlineAt: Date | null;
  webhookUrl: string | null;
  inputSha256: string | null;
  /** Keep the inputs as long as the job, past JOB_INPUT_RETENTION_S. @default false */
  keepInputs?: boolean;
}

/**
 * Inserts queued jobs in one statement. A job whose (owner, idempotency key)
 * was already taken is skipped; the ids actually inserted are returned. The
 * inline input bytes of all the jobs travel as one binary parameter, each
 * row taking its slice into input_data (inline-tensors.ts).
 */
export async function insertJobs(pool: Pool, jobs: NewJob[]): Promise<Set<string>> {
  const packed = packTensorRows(jobs.map((j) => j.inputs));
  // input_data is named only when the group has inline bytes: a group without sends no bytes parameter, and runs on a schema
  // before 0022 too (the upgrade test of 0016–0019 inserts through this release's code).
  const data = packed.data;
  const { rows } = await pool.query<{ id: string }>(
    prepared(
      `WITH input AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS j(id uuid, owner_key_id uuid, model_name text, model_version int, priority text,
            idempotency_key text, request_hash text, inputs jsonb, metadata jsonb, deadline_at timestamptz, webhook_url text, input_sha256 text,
            keep_inputs boolean, data_at int, data_len int)),
     ${CLAIM_IDEMPOTENCY_KEYS}
     INSERT INTO jobs (id, owner_key_id, model_name, model_version, priority, status, idempotency_key, request_hash, inputs,${data ? ' input_data,' : ''}
                       metadata, deadline_at, webhook_url, input_sha256, keep_inputs)
     SELECT j.id, j.owner_key_id, j.model_name, j.model_version, j.priority, 'queued', j.idempotency_key, j.request_hash, j.inputs,
            ${data ? `${rowDataSql('$2', 'j')},` : ''} j.metadata, j.deadline_at, j.webhook_url, j.input_sha256, COALESCE(j.keep_inputs, false)
       FROM input j
      WHERE j.idempotency_key IS NULL OR j.id IN (SELECT job_id FROM claimed)
     RETURNING id`,
      [
        JSON.stringify(
          jobs.map((j, i) => ({
            id: j.id,
            owner_key_id: j.ownerKeyId,
            model_name: j.modelName,
            model_version: j.modelVersion,
            priority: j.priority,
            idempotency_key: j.idempotencyKey,
            request_hash: j.requestHash,
            inputs: packed.rows[i]!.tensors,
            data_at: packed.rows[i]!.dataAt,
            data_len: packed.rows[i]!.dataLen,
            metadata: j.metadata,
            deadline_at: j.deadlineAt,
            webhook_url: j.webhookUrl,
            input_sha256: j.inputSha256,
            keep_inputs: j.keepInputs ?? false,
          })),
        ),
        ...(data ? [data] : []),
      ],
    ),
  );
  return new Set(rows.map((r) => r.id));
}

export async function findJobByIdempotencyKey(pool: Pool, ownerKeyId: string, idempotencyKey: string): Promise<JobRecord | undefined> {
  // The key's row first, then the job by id in its day's partition (an id out of a subquery would plan every partition).
  const key = await pool.query<{ job_id: string }>('SELECT job_id FROM job_idempotency WHERE owner_key_id = $1 AND idempotency_key = $2', [
    ownerKeyId,
    idempotencyKey,
  ]);
  const id = key.rows[0]?.job_id;
  if (id === undefined) return undefined;
  const { rows } = await pool.query(`SELECT ${COLUMNS} FROM jobs WHERE id = $1 AND ${idRangeSql(daysOf([id]))} AND owner_key_id = $2`, [id, ownerKeyId]);
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/**
 * A job by id, with where its batch ran; ownerKeyId null means any owner
 * (admin). `inputBytes`: with its inline inputs' bytes (a download or a
 * retry), else its inputs as descriptions only. Prepared: every poll of every
 * job runs it. Its text names the id's day (job-id-range.ts), so its plan
 * holds that day's partition alone: one statement per day a connection
 * meets (the pool renews connections hourly, pool.ts), instead of one
 * generic plan that locks every partition on every poll.
 */
export async function findJob(pool: Pool, id: string, ownerKeyId: string | null, o: { inputBytes?: boolean } = {}): Promise<JobRecord | undefined> {
  const { rows } = await pool.query(
    prepared(
      `SELECT ${o.inputBytes ? COLUMNS : VIEW_COLUMNS}, b.device, b.provider, b.model_sha256 FROM jobs
         LEFT JOIN LATERAL (SELECT device, provider, model_sha256 FROM batches WHERE batches.id = jobs.batch_id) b ON true
        WHERE id = $1 AND ${idRangeSql(daysOf([id]))} AND ($2::uuid IS NULL OR owner_key_id = $2)`,
      [id, ownerKeyId],
    ),
  );
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/** Removes queued jobs that were never accepted (the queue refused them), with their Idempotency-Keys, so a retry may use the key again. */
export async function deleteJobs(pool: Pool, ids: string[]): Promise<void> {
  await pool.query(
    `WITH deleted AS (DELETE FROM jobs WHERE id = ANY($1::uuid[]) AND ${idRangeSql(daysOf(ids))} AND status = 'queued' RETURNING id)
     DELETE FROM job_idempotency WHERE job_id IN (SELECT id FROM deleted)`,
    [ids],
  );
}

/** Cancels a job only while it is queued; returns the job as it is afterwards. */
export async function cancelQueuedJob(pool: Pool, id: string, ownerKeyId: string | null): Promise<JobRecord | undefined> {
  const day = idRangeSql(daysOf([id]));
  const { rows } = await pool.query(
    `WITH c AS (
       UPDATE jobs SET status = 'canceled', finished_at = now()
        WHERE id = $1 AND ${day} AND status = 'queued' AND ($2::uuid IS NULL OR owner_key_id = $2)
        RETURNING ${COLUMNS})
     SELECT * FROM c
     UNION ALL
     SELECT ${COLUMNS} FROM jobs WHERE id = $1 AND ${day} AND ($2::uuid IS NULL OR owner_key_id = $2) AND NOT EXISTS (SELECT 1 FROM c)`,
    [id, ownerKeyId],
  );
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/** The jobs with these ids (their views: input bytes left out), in no order; the day range as literals, the ids as an array the primary key answers. */
export async function findJobsByIds(pool: Pool, ids: readonly string[]): Promise<JobRecord[]> {
  if (ids.length === 0) return [];
  const { rows } = await pool.query(`SELECT ${VIEW_COLUMNS} FROM jobs WHERE ${idRangeSql(daysOf(ids))} AND id = ANY($1::uuid[])`, [ids]);
  return rows.map(toRecord);
}

/** Cancels those of these jobs still queued, in one statement; answers the ids and models of the jobs it canceled. */
export async function cancelQueuedJobsByIds(pool: Pool, ids: readonly string[]): Promise<Array<{ id: string; modelName: string }>> {
  if (ids.length === 0) return [];
  const { rows } = await pool.query<{ id: string; model_name: string }>(
    `UPDATE jobs SET status = 'canceled', finished_at = now()
      WHERE ${idRangeSql(daysOf(ids))} AND id = ANY($1::uuid[]) AND status = 'queued'
      RETURNING id::text, model_name`,
    [ids],
  );
  return rows.map((r) => ({ id: r.id, modelName: r.model_name }));
}

/** The status of each of these jobs (a job not found is left out): the narrow read a watcher of many jobs polls. */
export async function findJobStatuses(pool: Pool, ids: readonly string[]): Promise<Array<{ id: string; status: JobStatus }>> {
  if (ids.length === 0) return [];
  const { rows } = await pool.query<{ id: string; status: JobStatus }>(
    `SELECT id::text, status FROM jobs WHERE ${idRangeSql(daysOf(ids))} AND id = ANY($1::uuid[])`,
    [ids],
  );
  return rows;
}
