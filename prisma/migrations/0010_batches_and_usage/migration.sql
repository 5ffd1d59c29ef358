-- Batch provenance and device-time accounting. A worker records each batch it
-- ran (model artifact, worker, device, execution provider, size, items,
-- device time); each job it stores records its items (rows along the batch
-- dimension) and device_ms, its share of the batch's inference time by items.
CREATE TABLE "batches" (
    "id" UUID NOT NULL,
    "model_name" TEXT NOT NULL,
    "model_version" INTEGER NOT NULL,
    "model_sha256" TEXT NOT NULL,
    "worker_id" TEXT NOT NULL,
    "device" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "items" INTEGER NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "infer_ms" DOUBLE PRECISION NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    CONSTRAINT "batches_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "batches_created_at_idx" ON "batches"("created_at");

ALTER TABLE "jobs"
    ADD COLUMN "items" INTEGER,
    ADD COLUMN "device_ms" DOUBLE PRECISION;

-- Usage reads jobs by finish time; jobs_finished_at_idx (0002) serves the range.
-- A batch's jobs are read by batch_id.
CREATE INDEX "jobs_batch_id_idx" ON "jobs"("batch_id") WHERE "batch_id" IS NOT NULL;
