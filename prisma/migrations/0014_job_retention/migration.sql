-- Bounded storage (issue 17): finished jobs are kept for a retention period,
-- then purged to a tombstone; their input tensors may go sooner. Every new
-- column is NULL or has a constant default: no table rewrite (PostgreSQL 11+).

-- A purged job keeps its identity and accounting (owner, model, status,
-- times, device time, batch, error code) and loses its data: inputs '[]',
-- outputs, metadata, webhook URL, error message, input hash.
ALTER TABLE "jobs"
    ADD COLUMN "purged_at" TIMESTAMPTZ(3),
    ADD COLUMN "purge_reason" TEXT CONSTRAINT "jobs_purge_reason_check" CHECK ("purge_reason" IN ('retention', 'deleted')),
    ADD COLUMN "keep_inputs" BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN "inputs_dropped_at" TIMESTAMPTZ(3);

-- How long a finished job of this key is kept, in seconds; NULL: the server's JOB_RETENTION_S.
ALTER TABLE "api_keys"
    ADD COLUMN "retention_s" INTEGER CONSTRAINT "api_keys_retention_s_check" CHECK ("retention_s" >= 60);

-- The same per model name, in a table of its own rather than on every version
-- row: a version uploaded later follows it with nothing to copy, and the jobs
-- of a name whose versions were all retired keep following it.
CREATE TABLE "model_retention" (
    "model_name" TEXT NOT NULL,
    "retention_s" INTEGER NOT NULL CONSTRAINT "model_retention_retention_s_check" CHECK ("retention_s" >= 60),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_by" UUID,
    CONSTRAINT "model_retention_pkey" PRIMARY KEY ("model_name"),
    CONSTRAINT "model_retention_updated_by_fkey" FOREIGN KEY ("updated_by") REFERENCES "api_keys"("id") ON DELETE SET NULL ON UPDATE CASCADE
);

-- Purge candidates: finished, not yet purged, oldest first. Tombstones and
-- unfinished jobs are not in it, so the sweep's scan stays on live rows.
CREATE INDEX "jobs_purge_candidates_idx" ON "jobs"("finished_at") WHERE "purged_at" IS NULL AND "finished_at" IS NOT NULL;

-- Inputs to drop: finished jobs that did not ask to keep them and still have them.
CREATE INDEX "jobs_input_drop_candidates_idx" ON "jobs"("finished_at")
    WHERE "inputs_dropped_at" IS NULL AND "purged_at" IS NULL AND "keep_inputs" = false AND "finished_at" IS NOT NULL AND "status" = 'succeeded';
