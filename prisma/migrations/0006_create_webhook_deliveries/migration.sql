-- Webhooks for finished jobs. The API's dispatcher finds due deliveries by
-- itself, so nothing that finishes a job (worker, cancel, expiry) has to know
-- about webhooks: a job is due once it has a URL and a finished_at, until its
-- webhook_state is set (delivered or given_up). webhook_next_at is the next
-- attempt (or the lease of the attempt in flight); NULL means "at finished_at".
ALTER TABLE "jobs"
    ADD COLUMN "webhook_state" TEXT,
    ADD COLUMN "webhook_attempts" INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN "webhook_next_at" TIMESTAMPTZ(3);

-- Only rows with a pending webhook are in it, so polling costs nothing when
-- idle and a job without a webhook never touches it.
CREATE INDEX "jobs_webhook_due_idx" ON "jobs"((COALESCE("webhook_next_at", "finished_at")))
    WHERE "webhook_url" IS NOT NULL AND "finished_at" IS NOT NULL AND "webhook_state" IS NULL;

CREATE TABLE "webhook_deliveries" (
    "id" UUID NOT NULL,
    "job_id" UUID NOT NULL,
    "attempt" INTEGER NOT NULL,
    "url" TEXT NOT NULL,
    "status_code" INTEGER,
    "error" TEXT,
    "duration_ms" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "webhook_deliveries_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE CASCADE
);
CREATE INDEX "webhook_deliveries_job_id_attempt_idx" ON "webhook_deliveries"("job_id", "attempt");
