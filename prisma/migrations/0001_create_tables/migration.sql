-- inferq schema, first version. Append-only: later changes get their own folder.

CREATE TABLE "api_keys" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "secret_hash" TEXT NOT NULL,
    "scopes" TEXT[] NOT NULL,
    "rate_limit_per_min" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "revoked_at" TIMESTAMPTZ(3),
    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "api_keys_prefix_key" ON "api_keys"("prefix");

CREATE TABLE "models" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'ready',
    "artifact_key" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "size_bytes" BIGINT NOT NULL,
    "inputs" JSONB NOT NULL,
    "outputs" JSONB NOT NULL,
    "batchable" BOOLEAN NOT NULL,
    "max_batch_size" INTEGER NOT NULL,
    "max_batch_delay_ms" INTEGER NOT NULL,
    "execution_providers" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    CONSTRAINT "models_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "models_created_by_fkey" FOREIGN KEY ("created_by") REFERENCES "api_keys"("id") ON DELETE SET NULL
);
CREATE UNIQUE INDEX "models_name_version_key" ON "models"("name", "version");

CREATE TABLE "jobs" (
    "id" UUID NOT NULL,
    "owner_key_id" UUID NOT NULL,
    "model_name" TEXT NOT NULL,
    "model_version" INTEGER NOT NULL,
    "priority" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "idempotency_key" TEXT,
    "request_hash" TEXT,
    "inputs" JSONB NOT NULL,
    "outputs" JSONB,
    "error_code" TEXT,
    "error_message" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "worker_id" TEXT,
    "batch_id" UUID,
    "batch_size" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),
    "queue_ms" INTEGER,
    "infer_ms" DOUBLE PRECISION,
    "deadline_at" TIMESTAMPTZ(3),
    "webhook_url" TEXT,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    CONSTRAINT "jobs_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "jobs_owner_key_id_fkey" FOREIGN KEY ("owner_key_id") REFERENCES "api_keys"("id") ON DELETE RESTRICT
);
CREATE UNIQUE INDEX "jobs_owner_key_id_idempotency_key_key" ON "jobs"("owner_key_id", "idempotency_key");
CREATE INDEX "jobs_owner_key_id_created_at_id_idx" ON "jobs"("owner_key_id", "created_at" DESC, "id" DESC);
CREATE INDEX "jobs_created_at_id_idx" ON "jobs"("created_at" DESC, "id" DESC);
-- The reconciler scans only unfinished jobs.
CREATE INDEX "jobs_unfinished_idx" ON "jobs"("created_at") WHERE "status" IN ('queued', 'running');

CREATE TABLE "audit_log" (
    "id" BIGSERIAL NOT NULL,
    "actor_key_id" UUID,
    "action" TEXT NOT NULL,
    "resource" TEXT NOT NULL,
    "details" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "audit_log_created_at_idx" ON "audit_log"("created_at");
