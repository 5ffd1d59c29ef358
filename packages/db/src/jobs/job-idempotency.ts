/**
 * Claims Idempotency-Keys in job_idempotency, in the statement that inserts
 * the jobs (`input`: a CTE of the new jobs with owner_key_id,
 * idempotency_key and id); `claimed` lists the job ids whose key this
 * statement won. A key another transaction is claiming makes it wait for
 * that one's outcome, as a unique index would. jobs itself cannot hold the
 * key unique: it is partitioned by id (migration 0018).
 */
export const CLAIM_IDEMPOTENCY_KEYS = `claimed AS (
       INSERT INTO job_idempotency (owner_key_id, idempotency_key, job_id)
       SELECT owner_key_id, idempotency_key, id FROM input WHERE idempotency_key IS NOT NULL
       ON CONFLICT DO NOTHING
       RETURNING job_id)`;
