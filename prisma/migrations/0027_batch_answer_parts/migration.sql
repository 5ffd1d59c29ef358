-- A batch's answers are written while it runs (issue 45): a line is answered
-- as soon as its jobs have ended, into the next part of its output or error
-- file, in the order lines end. bulk_batch_parts lists the parts written
-- (one object each, under files/<batch id>.parts/); a line's `part` names
-- the one that holds its answer (NULL: not answered yet), so a runner that
-- takes the batch over answers only the others. The batch's finalize joins
-- each file's parts into the file's object and deletes them.
ALTER TABLE "bulk_batch_requests" ADD COLUMN "part" INTEGER;

CREATE TABLE "bulk_batch_parts" (
    "batch_id" TEXT NOT NULL,
    "part" INTEGER NOT NULL,
    "file" TEXT NOT NULL,
    "object_key" TEXT NOT NULL,
    "lines" INTEGER NOT NULL,
    "bytes" BIGINT NOT NULL,
    CONSTRAINT "bulk_batch_parts_pkey" PRIMARY KEY ("batch_id", "part"),
    CONSTRAINT "bulk_batch_parts_batch_id_fkey" FOREIGN KEY ("batch_id") REFERENCES "bulk_batches"("id") ON DELETE CASCADE,
    CONSTRAINT "bulk_batch_parts_file_check" CHECK ("file" IN ('output', 'errors'))
);
