-- The Batch API (issue 29), in OpenAI's shape. A client uploads a JSONL file
-- of requests (POST /v1/files, purpose batch) and creates a batch over it;
-- the API validates the file, submits each line as a job, and writes the
-- answers to an output file and an error file (purpose batch_output).
--
-- files: what each file is and where its object lives (files/<id>.jsonl).
CREATE TABLE "files" (
    "id" TEXT NOT NULL,
    "owner_key_id" UUID NOT NULL,
    "purpose" TEXT NOT NULL,
    "filename" TEXT NOT NULL,
    "bytes" BIGINT NOT NULL,
    "object_key" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    CONSTRAINT "files_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "files_owner_key_id_fkey" FOREIGN KEY ("owner_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE,
    CONSTRAINT "files_purpose_check" CHECK ("purpose" IN ('batch', 'batch_output')),
    CONSTRAINT "files_bytes_check" CHECK ("bytes" >= 0)
);
-- A key's files, newest first (GET /v1/files).
CREATE INDEX "files_owner_key_id_created_at_id_idx" ON "files"("owner_key_id", "created_at" DESC, "id" DESC);

-- bulk_batches: one per POST /v1/batches ("batches" holds the inference
-- batches a worker ran). `submitted` is the file's last line submitted as a
-- job (lines go in order): a batch taken over by another API replica
-- (lease_until passed) goes on after it. lease_owner names the runner
-- holding it, so a runner whose lease ran out cannot renew or release the
-- lease its successor took.
CREATE TABLE "bulk_batches" (
    "id" TEXT NOT NULL,
    "owner_key_id" UUID NOT NULL,
    "endpoint" TEXT NOT NULL,
    "input_file_id" TEXT NOT NULL,
    "completion_window" TEXT NOT NULL,
    "metadata" JSONB,
    "status" TEXT NOT NULL DEFAULT 'validating',
    "total" INTEGER NOT NULL DEFAULT 0,
    "submitted" INTEGER NOT NULL DEFAULT 0,
    "completed" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "output_file_id" TEXT,
    "error_file_id" TEXT,
    "errors" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "in_progress_at" TIMESTAMPTZ(3),
    "finalizing_at" TIMESTAMPTZ(3),
    "completed_at" TIMESTAMPTZ(3),
    "failed_at" TIMESTAMPTZ(3),
    "expired_at" TIMESTAMPTZ(3),
    "cancelling_at" TIMESTAMPTZ(3),
    "cancelled_at" TIMESTAMPTZ(3),
    "lease_owner" TEXT,
    "lease_until" TIMESTAMPTZ(3),
    CONSTRAINT "bulk_batches_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "bulk_batches_owner_key_id_fkey" FOREIGN KEY ("owner_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE,
    CONSTRAINT "bulk_batches_status_check" CHECK ("status" IN ('validating', 'failed', 'in_progress', 'finalizing', 'completed', 'expired', 'cancelling', 'cancelled'))
);
CREATE INDEX "bulk_batches_owner_key_id_created_at_id_idx" ON "bulk_batches"("owner_key_id", "created_at" DESC, "id" DESC);
-- The runners' work list: batches not yet ended.
CREATE INDEX "bulk_batches_active_idx" ON "bulk_batches"("created_at") WHERE "status" IN ('validating', 'in_progress', 'finalizing', 'cancelling');

-- bulk_batch_requests: a batch's lines, written as the file is validated;
-- job_ids once the line is submitted (one job, or one a text for
-- /v1/embeddings, with what answering it takes in `answer`), or error when
-- its submit was refused.
CREATE TABLE "bulk_batch_requests" (
    "batch_id" TEXT NOT NULL,
    "line" INTEGER NOT NULL,
    "custom_id" TEXT NOT NULL,
    "job_ids" UUID[],
    "answer" JSONB,
    "error" JSONB,
    CONSTRAINT "bulk_batch_requests_pkey" PRIMARY KEY ("batch_id", "line"),
    CONSTRAINT "bulk_batch_requests_custom_id_key" UNIQUE ("batch_id", "custom_id"),
    CONSTRAINT "bulk_batch_requests_batch_id_fkey" FOREIGN KEY ("batch_id") REFERENCES "bulk_batches"("id") ON DELETE CASCADE
);
