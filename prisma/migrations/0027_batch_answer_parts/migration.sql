-- A batch's answers are written while it runs (issue 45): a line is answered
-- as soon as its jobs have ended, into the pending part of its output or
-- error file, in the order lines end. Each file is an S3 multipart upload
-- (its id in output_upload_id / errors_upload_id) that gets a part of 8 MiB
-- as its answers fill one; bulk_batch_parts lists the part numbers taken
-- (each once, under the lease: a runner that lost it never uploads over its
-- successor's part) and the ETags of those uploaded, and a line's `part` the
-- one that holds its answer (NULL: not in a part yet), so a runner that takes
-- the batch over answers only the others.
-- The finalize uploads the rest as each file's last part and completes the
-- upload: the file is made of its parts where they lie, nothing copied.
ALTER TABLE "bulk_batch_requests" ADD COLUMN "part" INTEGER;
ALTER TABLE "bulk_batches" ADD COLUMN "output_upload_id" TEXT;
ALTER TABLE "bulk_batches" ADD COLUMN "errors_upload_id" TEXT;

CREATE TABLE "bulk_batch_parts" (
    "batch_id" TEXT NOT NULL,
    "part" INTEGER NOT NULL,
    "file" TEXT NOT NULL,
    "etag" TEXT,
    "lines" INTEGER NOT NULL,
    "bytes" BIGINT NOT NULL,
    CONSTRAINT "bulk_batch_parts_pkey" PRIMARY KEY ("batch_id", "part"),
    CONSTRAINT "bulk_batch_parts_batch_id_fkey" FOREIGN KEY ("batch_id") REFERENCES "bulk_batches"("id") ON DELETE CASCADE,
    CONSTRAINT "bulk_batch_parts_file_check" CHECK ("file" IN ('output', 'errors'))
);
