-- Most jobs carry no Idempotency-Key and every job is unfinished when it is
-- inserted: partial indexes leave those rows out, so a submit updates two
-- indexes fewer. A NULL key never conflicts anyway, and a finished_at range
-- implies finished_at IS NOT NULL, so the stats reads still use the index.
DROP INDEX "jobs_owner_key_id_idempotency_key_key";
CREATE UNIQUE INDEX "jobs_owner_key_id_idempotency_key_key" ON "jobs"("owner_key_id", "idempotency_key") WHERE "idempotency_key" IS NOT NULL;
DROP INDEX "jobs_finished_at_idx";
CREATE INDEX "jobs_finished_at_idx" ON "jobs"("finished_at") WHERE "finished_at" IS NOT NULL;
