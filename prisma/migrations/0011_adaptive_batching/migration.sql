-- Adaptive batching, opt-in per model version: in 'auto' mode the worker
-- measures inference time per batch size on its device and picks the batch
-- size and delay, up to max_batch_size and max_batch_delay_ms, that give the
-- most throughput while the p99 queue wait stays under latency_target_ms.
-- 'fixed' versions (every existing one) batch as uploaded; their target is NULL.
ALTER TABLE "models"
    ADD COLUMN "batching_mode" TEXT NOT NULL DEFAULT 'fixed' CONSTRAINT "models_batching_mode_check" CHECK ("batching_mode" IN ('fixed', 'auto')),
    ADD COLUMN "latency_target_ms" INTEGER;
