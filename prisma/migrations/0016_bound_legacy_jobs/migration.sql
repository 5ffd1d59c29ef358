-- Partitioning jobs by time (issue 17), step 1 of 4. The table becomes the
-- first partition, jobs_legacy, of a jobs table partitioned by RANGE (id): job
-- ids are UUIDv7, whose first 48 bits are the Unix time in ms, so an id range
-- is a time range and a lookup by id reads one partition. Attaching the table
-- without scanning it needs a validated CHECK that every id lies below the
-- partition's upper bound; this adds it NOT VALID (a catalogue change: ACCESS
-- EXCLUSIVE for milliseconds, no scan) and 0017 validates it, each in its own
-- transaction so that the scan does not hold this lock.
--
-- The bound is the start (UTC) of the 7th day after today: rows written until
-- 0018 runs stay below it, and jobs_legacy takes the jobs of the coming days
-- too; daily partitions start there. 0018 reads it back from this constraint.
SET LOCAL lock_timeout = '10s';
DO $$
DECLARE
  ms bigint := (extract(epoch FROM date_trunc('day', now() AT TIME ZONE 'UTC') + interval '7 days') * 1000)::bigint;
  h text := lpad(to_hex(ms), 12, '0');
BEGIN
  EXECUTE format('ALTER TABLE jobs ADD CONSTRAINT jobs_legacy_bound CHECK (id < %L::uuid) NOT VALID',
                 substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-0000-0000-000000000000');
END $$;

-- A unique index must contain the partition key, so (owner_key_id,
-- idempotency_key) cannot stay unique on jobs: an Idempotency-Key is claimed
-- in a table of its own, in the statement that inserts the job (jobs.ts).
CREATE TABLE "job_idempotency" (
    "owner_key_id" UUID NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "job_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    CONSTRAINT "job_idempotency_pkey" PRIMARY KEY ("owner_key_id", "idempotency_key")
);
-- Removing a job (a submission the queue refused; later, a dropped partition) removes its key by job id.
CREATE INDEX "job_idempotency_job_id_idx" ON "job_idempotency"("job_id");

-- From now until 0018, every keyed job inserted (API replicas of the previous
-- release do not claim keys here) has its key recorded by this trigger; 0017
-- copies the keys of the rows already there. Catalogue changes only: every
-- lock this migration takes is held for milliseconds, and nothing here reads
-- the table.
CREATE FUNCTION jobs_record_idempotency_key() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO job_idempotency (owner_key_id, idempotency_key, job_id) VALUES (NEW.owner_key_id, NEW.idempotency_key, NEW.id)
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;
CREATE TRIGGER jobs_record_idempotency_key AFTER INSERT ON jobs
  FOR EACH ROW WHEN (NEW.idempotency_key IS NOT NULL) EXECUTE FUNCTION jobs_record_idempotency_key();
