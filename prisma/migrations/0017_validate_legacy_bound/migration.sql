-- Partitioning jobs, step 2 of 4: validates 0016's CHECK (id below the legacy
-- bound). A scan of jobs under SHARE UPDATE EXCLUSIVE: reads and writes go
-- on (4.5 s at 10M rows). Apart from 0016 so that its ACCESS EXCLUSIVE lock
-- is not held through the scan.
ALTER TABLE jobs VALIDATE CONSTRAINT jobs_legacy_bound;

-- The Idempotency-Keys of the rows written before 0016's trigger (it records
-- every later one): a read of the keyed rows through the partial unique
-- index of 0003, under ACCESS SHARE; writes go on.
INSERT INTO job_idempotency (owner_key_id, idempotency_key, job_id, created_at)
SELECT owner_key_id, idempotency_key, id, created_at FROM jobs WHERE idempotency_key IS NOT NULL
ON CONFLICT DO NOTHING;
