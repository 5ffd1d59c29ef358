import type { NewJob } from './jobs.ts';
import type { Pool } from './pool.ts';

/**
 * Answers `job` from the response cache: when a succeeded job of the same
 * model version had the same input hash, `job` is inserted already
 * succeeded, with that job's inputs and outputs (the same bytes, so the same
 * S3 objects serve both) and `cached_from` naming it. One statement: the
 * lookup is a probe of jobs_response_cache_idx. Returns false on a miss, and
 * when an equal idempotency key won the insert (the caller's normal path
 * resolves that). Finished at insert, the job needs no queue job and its
 * webhook is due at once.
 */
export async function insertCachedJob(pool: Pool, job: Omit<NewJob, 'inputs'> & { inputSha256: string }): Promise<boolean> {
  const { rowCount } = await pool.query(
    `INSERT INTO jobs (id, owner_key_id, model_name, model_version, priority, status, idempotency_key, request_hash, inputs, outputs,
                       metadata, deadline_at, webhook_url, input_sha256, cached_from, started_at, finished_at)
     SELECT $1, $2, s.model_name, s.model_version, $5, 'succeeded', $6, $7, s.inputs, s.outputs, $8, $9, $10, s.input_sha256, s.id, now(), now()
       FROM (SELECT id, model_name, model_version, inputs, outputs, input_sha256 FROM jobs
              WHERE model_name = $3 AND model_version = $4 AND input_sha256 = $11 AND status = 'succeeded'
              ORDER BY finished_at DESC LIMIT 1) s
     ON CONFLICT (owner_key_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING`,
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
    ],
  );
  return rowCount === 1;
}
