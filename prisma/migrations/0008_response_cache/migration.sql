-- Response cache, opt-in per model version: a job whose model version has
-- response_cache on records the sha256 of its input tensors; a later job with
-- the same version and hash is answered with the stored result of the newest
-- succeeded one (cached_from) instead of running the model.
ALTER TABLE "models" ADD COLUMN "response_cache" BOOLEAN NOT NULL DEFAULT false;

ALTER TABLE "jobs"
    ADD COLUMN "input_sha256" TEXT,
    ADD COLUMN "cached_from" UUID;

-- Only jobs of cache-enabled versions that succeeded are in it: the lookup is
-- one index probe, and models without the cache never touch it.
CREATE INDEX "jobs_response_cache_idx" ON "jobs"("model_name", "model_version", "input_sha256", "finished_at" DESC)
    WHERE "input_sha256" IS NOT NULL AND "status" = 'succeeded';
