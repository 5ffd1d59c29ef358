-- Inline tensors as bytes (issue 18): a job's inline input tensors are kept
-- concatenated in input_data, its inline outputs in output_data; each inline
-- tensor in the inputs / outputs jsonb records its byte offset there ("at",
-- with "bytes" its length) instead of base64 text ("b64", which rows written
-- before this still hold and are still read). A binary submit's raw bytes are
-- stored as they came, with no base64 encode in the API nor decode in the
-- worker. Float bytes do not compress: out of line in TOAST, uncompressed,
-- like 0004 did for the jsonb columns. Catalogue work only (nullable, no
-- default); ADD COLUMN and SET STORAGE on the partitioned parent reach every
-- partition, and the days the API creates ahead copy the parent's columns
-- with their storage (LIKE jobs INCLUDING STORAGE, job-partitions.ts).
SET LOCAL lock_timeout = '10s';
ALTER TABLE jobs ADD COLUMN input_data BYTEA, ADD COLUMN output_data BYTEA;
ALTER TABLE jobs ALTER COLUMN input_data SET STORAGE EXTERNAL, ALTER COLUMN output_data SET STORAGE EXTERNAL;
