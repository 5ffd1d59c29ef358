-- Retired model versions (DELETE /v1/models/:name): a retired version takes
-- no new jobs, while its queued and running jobs finish. The row stays for
-- the history of its jobs; artifact_deleted_at is set once its artifact (and
-- tokenizer) were swept from object storage, when no unfinished job needed
-- them any more. Nullable columns without a default: no table rewrite.
ALTER TABLE "models" ADD COLUMN "retired_at" TIMESTAMPTZ(3);
ALTER TABLE "models" ADD COLUMN "retired_by" UUID;
ALTER TABLE "models" ADD COLUMN "artifact_deleted_at" TIMESTAMPTZ(3);
ALTER TABLE "models" ADD CONSTRAINT "models_retired_by_fkey" FOREIGN KEY ("retired_by") REFERENCES "api_keys"("id") ON DELETE SET NULL;
