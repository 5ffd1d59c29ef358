-- The deadline sweep reads queued jobs whose deadline has passed; only jobs
-- that carry a deadline and are still queued are in this index, so it stays
-- small and a submit without a deadline does not touch it.
CREATE INDEX "jobs_queued_deadline_idx" ON "jobs"("deadline_at") WHERE "status" = 'queued' AND "deadline_at" IS NOT NULL;
