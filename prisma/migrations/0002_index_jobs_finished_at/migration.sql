-- The stats endpoint reads finished jobs by finish time, a window at a time.
CREATE INDEX "jobs_finished_at_idx" ON "jobs"("finished_at");
