import type { StoredTensor } from '@inferq/contracts';
import { packTensorRows } from '../sql/inline-tensors.ts';
import { CLAIM_IDEMPOTENCY_KEYS } from './job-idempotency.ts';
import type { NewJob } from './jobs.ts';
import type { Pool } from '../connection/pool.ts';
import { unpurgedJobIds } from '../retention/job-floors.ts';
import { idRangeSql } from '../sql/job-id-range.ts';

/**
 * Answers `job` from the response cache: when a succeeded job of the same
 * model version had the same input hash, `job` is inserted already
 * succeeded, with that job's outputs (the same bytes, so the same S3 objects
 * serve both) and `cached_from` naming it. Its inputs are `inputs` when given
 * (a job that keeps its inputs stores its own), else the source's as they
 * are now, dropped or not (job-retention.ts never deletes an object a row
 * still references). One statement: the lookup is a probe of
 * jobs_response_cache_idx, and the source row is locked FOR SHARE so a purge
 * cannot take its objects while they are copied (a purged source has no hash
 * and is never found). An Idempotency-Key is claimed in job_idempotency in
 * the same statement, only on a hit. Returns false on a miss, and when an
 * equal idempotency key won the insert (the caller's normal path resolves that).
 * Finished at insert, the job needs no queue job and its webhook is due at once.
 */
export async function insertCachedJob(pool: Pool, job: Omit<NewJob, 'inputs'> & { inputSha256: string; inputs?: StoredTensor[] }): Promise<boolean> {
  // Own inputs: their inline bytes are the whole of the row's input_data (inline-tensors.ts), else the source's with its bytes.
  const own = job.inputs ? packTensorRows([job.inputs]) : undefined;
  const { rowCount } = await pool.query(
    `WITH s AS (
       SELECT id, model_name, model_version, inputs, outputs, input_data, output_data, input_sha256, inputs_dropped_at FROM jobs
        WHERE ${idRangeSql(await unpurgedJobIds(pool))} AND model_name = $3 AND model_version = $4 AND input_sha256 = $11 AND status = 'succeeded'
        ORDER BY finished_at DESC LIMIT 1 FOR SHARE),
     input AS (SELECT $1::uuid AS id, $2::uuid AS owner_key_id, $6::text AS idempotency_key FROM s),
     ${CLAIM_IDEMPOTENCY_KEYS}
     INSERT INTO jobs (id, owner_key_id, model_name, model_version, priority, status, idempotency_key, request_hash, inputs, outputs,
                       input_data, output_data,
                       metadata, deadline_at, webhook_url, input_sha256, cached_from, started_at, finished_at, keep_inputs, inputs_dropped_at)
     SELECT $1, $2, s.model_name, s.model_version, $5, 'succeeded', $6, $7, COALESCE($12::jsonb, s.inputs), s.outputs,
            CASE WHEN $12::jsonb IS NULL THEN s.input_data ELSE $14::bytea END, s.output_data, $8, $9, $10,
            s.input_sha256, s.id, now(), now(), $13, CASE WHEN $12::jsonb IS NULL AND s.inputs_dropped_at IS NOT NULL THEN now() END
       FROM s
      WHERE $6::text IS NULL OR EXISTS (SELECT 1 FROM claimed)`,
    [
      job.id,
      job.ownerKeyId,
      job.modelName,
      job.modelVersion,
      job.priority,
      job.idempotencyKey,
      job.requestHash,
      JSON.stringify(job.metadata),
      job.deadlineAt,
      job.webhookUrl,
      job.inputSha256,
      own ? JSON.stringify(own.rows[0]!.tensors) : null,
      job.keepInputs ?? false,
      own?.data ?? null,
    ],
  );
  return rowCount === 1;
}
