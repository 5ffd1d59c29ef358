-- Uploads (issue 18): a client asks for a presigned PUT URL (POST /v1/uploads),
-- puts a large input's raw bytes there, then names the upload in a job input.
-- The row is what the API promised: the tensor's datatype and shape, its exact
-- size, where the object is, until when it may be used; claimed_at and
-- claimed_by_job are set once, by the submit that took it. Rows past
-- expires_at (claimed or not) are deleted by the API's upload sweep, with
-- their objects; the bucket's expiry rule on uploads/ is the backstop.
CREATE TABLE "uploads" (
    "id" UUID NOT NULL,
    "owner_key_id" UUID NOT NULL,
    "datatype" TEXT NOT NULL,
    "shape" JSONB NOT NULL,
    "bytes" BIGINT NOT NULL,
    "object_key" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "claimed_at" TIMESTAMPTZ(3),
    "claimed_by_job" UUID,
    CONSTRAINT "uploads_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "uploads_owner_key_id_fkey" FOREIGN KEY ("owner_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE,
    CONSTRAINT "uploads_bytes_check" CHECK ("bytes" >= 0)
);
-- The sweep's scan: the oldest expiries first.
CREATE INDEX "uploads_expires_at_idx" ON "uploads"("expires_at");
