-- Jobs the record lost (invariant 12): a failover to an asynchronous standby
-- drops the last commits the old primary acknowledged, and with them rows of
-- jobs the API had accepted (202) and queued. Their queue entries survive in
-- Redis; a worker whose claim finds no row at all for an entry records the id
-- here, drops the entry and counts it (inferq_jobs_record_lost_total), and a
-- client polling the id gets 410 JOB_LOST instead of 404. The queue entry
-- carries no owner, so neither does the row: the id is a random UUID only its
-- submitter knows. Rows are deleted after JOB_TOMBSTONE_RETENTION_S by the
-- API's partition maintainer, like the jobs' own tombstones.
CREATE TABLE "lost_jobs" (
    "id" UUID NOT NULL,
    "model" TEXT NOT NULL,
    "lost_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    CONSTRAINT "lost_jobs_pkey" PRIMARY KEY ("id")
);
-- The retention's scan: the oldest first.
CREATE INDEX "lost_jobs_lost_at_idx" ON "lost_jobs"("lost_at");
