import type { StoredTensor } from '@inferq/contracts';
import type { Pool } from '../connection/pool.ts';
import { packTensorRows, rowDataSql } from '../sql/inline-tensors.ts';
import { prepared } from '../sql/prepared.ts';
import { batchJson, insertBatchSql, recordBatch, type NewBatch } from './batches.ts';
import { batchRowsSql, fencedTo, runColumns, runJson, runRow, type BatchRun, type JobClaim } from './run-fencing.ts';

// How a batch's jobs end, each write fenced to the batch's claim: results, failures, expiries, and jobs given back.

/**
 * Gives claimed jobs back after a fault of the worker's own: queued again as
 * if this claim never happened (its attempt not counted), the worker added to
 * the job's node faults and the fault kept as its last error. Fenced like
 * completeJobs; returns the ids given back.
 */
export async function releaseJobs(
  pool: Pool,
  batchId: string,
  workerId: string,
  jobs: Array<JobClaim & { code: string; message: string }>,
): Promise<Set<string>> {
  if (jobs.length === 0) return new Set();
  const ids = jobs.map((j) => j.id);
  const { rows } = await pool.query<{ id: string }>(
    `UPDATE jobs SET status = 'queued', attempts = r.attempt - 1, started_at = NULL, error_code = r.code, error_message = r.message,
            node_faults = node_faults || $3::text
       FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, attempt int, code text, message text)
      WHERE jobs.id = r.id AND ${batchRowsSql(ids, '$4')} AND ${fencedTo('$2', 'r')}
      RETURNING jobs.id`,
    [JSON.stringify(jobs.map((j) => ({ ...j, message: j.message.slice(0, 2000) }))), batchId, workerId, ids],
  );
  return new Set(rows.map((r) => r.id));
}

export interface JobSuccess extends JobClaim {
  outputs: StoredTensor[];
  inferMs: number;
  /** Rows the job put along the batch dimension. */
  items: number;
  /** Its share of the batch's device time: inferMs × items ÷ the batch's items. */
  deviceMs: number;
}

/**
 * Writes a batch's results in one statement (the inline output bytes of all
 * the jobs as one binary parameter, each row taking its slice), with the
 * batch's claim when it was never written, and with `batch` its record
 * (recordBatch's insert, in the same statement: one commit a batch). Fenced to the batch's attempt
 * (fencedTo): a replay is a no-op, and a worker whose jobs were claimed again
 * elsewhere (its lock expired while it was cut off) cannot write over or
 * beside the attempt that finished first. Returns the ids written.
 */
export async function completeJobs(pool: Pool, run: BatchRun, results: JobSuccess[], batch?: NewBatch): Promise<Set<string>> {
  if (results.length === 0) {
    if (batch) await recordBatch(pool, batch);
    return new Set();
  }
  const packed = packTensorRows(results.map((r) => r.outputs));
  const ids = results.map((r) => r.id);
  const { rows } = await pool.query<{ id: string }>(
    prepared(
      `${batch ? `WITH batch AS (${insertBatchSql('$5')}) ` : ''}
       UPDATE jobs SET status = 'succeeded', ${runColumns('r', 'run')}, outputs = r.outputs, output_data = ${rowDataSql('$3', 'r')},
            infer_ms = r.infer_ms, items = r.items, device_ms = r.device_ms, finished_at = now(), error_code = NULL, error_message = NULL
       FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, attempt int, outputs jsonb, infer_ms float8, items int, device_ms float8, data_at int, data_len int),
            ${runRow('$2')}
      WHERE jobs.id = r.id AND ${batchRowsSql(ids, '$4')} AND ${fencedTo('run.batch_id', 'r')}
      RETURNING jobs.id`,
      [
        JSON.stringify(
          results.map((r, i) => {
            const { tensors, dataAt, dataLen } = packed.rows[i]!;
            return {
              id: r.id,
              attempt: r.attempt,
              outputs: tensors,
              infer_ms: r.inferMs,
              items: r.items,
              device_ms: r.deviceMs,
              data_at: dataAt,
              data_len: dataLen,
            };
          }),
        ),
        runJson(run),
        packed.data,
        ids,
        ...(batch ? [batchJson(batch)] : []),
      ],
    ),
  );
  return new Set(rows.map((r) => r.id));
}

/**
 * Ends claimed jobs that cannot finish by their deadline, before they run:
 * `expired` with DEADLINE_EXCEEDED, like a job still queued at its deadline.
 */
export async function expireRunningJobs(pool: Pool, run: BatchRun, jobs: Array<JobClaim & { message: string }>): Promise<void> {
  if (jobs.length === 0) return;
  const ids = jobs.map((j) => j.id);
  await pool.query(
    `UPDATE jobs SET status = 'expired', ${runColumns('e', 'run')}, finished_at = now(), error_code = 'DEADLINE_EXCEEDED', error_message = e.message
       FROM jsonb_to_recordset($1::jsonb) AS e(id uuid, attempt int, message text), ${runRow('$2')}
      WHERE jobs.id = e.id AND ${batchRowsSql(ids, '$3')} AND ${fencedTo('run.batch_id', 'e')}`,
    [JSON.stringify(jobs), runJson(run), ids],
  );
}

export interface JobFailure {
  id: string;
  code: string;
  message: string;
  /** false: record the error but leave the job queued for its next attempt. */
  final: boolean;
  /** The attempt its batch ran (see failJobs' `run`). */
  attempt?: number;
}

/**
 * Records failures. With `run`, the batch whose attempts failed: each is
 * written with the batch's provenance only while the job is still that
 * attempt's (fenced like completeJobs). Without it (a payload no batch could
 * take), any queued or running job takes it.
 */
export async function failJobs(pool: Pool, failures: JobFailure[], run?: BatchRun): Promise<void> {
  if (failures.length === 0) return;
  const rows = failures.map((f) => ({ id: f.id, code: f.code, message: f.message.slice(0, 2000), final: f.final, attempt: f.attempt ?? null }));
  const ids = rows.map((f) => f.id);
  const range = batchRowsSql(ids, run ? '$3' : '$2');
  const outcome = `status = CASE WHEN f.final THEN 'failed' ELSE 'queued' END, finished_at = CASE WHEN f.final THEN now() ELSE NULL END,
            error_code = f.code, error_message = f.message`;
  const recordset = 'jsonb_to_recordset($1::jsonb) AS f(id uuid, code text, message text, final boolean, attempt int)';
  await pool.query(
    run
      ? `UPDATE jobs SET ${outcome}, ${runColumns('f', 'run')} FROM ${recordset}, ${runRow('$2')}
          WHERE jobs.id = f.id AND ${range} AND ${fencedTo('run.batch_id', 'f')}`
      : `UPDATE jobs SET ${outcome} FROM ${recordset} WHERE jobs.id = f.id AND ${range} AND jobs.status IN ('queued', 'running')`,
    run ? [JSON.stringify(rows), runJson(run), ids] : [JSON.stringify(rows), ids],
  );
}
