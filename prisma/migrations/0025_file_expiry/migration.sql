-- Batch API files expire, as OpenAI's do: an upload by its `expires_after`
-- (else the server's BATCH_FILE_EXPIRES_S), a batch's output and error files
-- by the batch's `output_expires_after` (else never). The API's file sweep
-- deletes the expired ones, row and object. Files stored before this keep
-- expires_at NULL: kept until deleted, as they were promised.
ALTER TABLE "files" ADD COLUMN "expires_at" TIMESTAMPTZ(3);
-- The sweep's work list.
CREATE INDEX "files_expires_at_idx" ON "files"("expires_at") WHERE "expires_at" IS NOT NULL;

ALTER TABLE "bulk_batches" ADD COLUMN "output_expires_after_s" INTEGER;
