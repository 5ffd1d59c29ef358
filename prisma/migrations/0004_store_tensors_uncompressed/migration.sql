-- Tensors are base64 of numbers, which pglz cannot shrink: on CNN inputs
-- (16 KiB each) it spent ~30 % of Postgres's insert time and saved nothing
-- (167 MB vs 168 MB for 9,600 rows). Large values still go out of line in
-- TOAST, uncompressed. Applies to rows written from now on.
ALTER TABLE "jobs" ALTER COLUMN "inputs" SET STORAGE EXTERNAL;
ALTER TABLE "jobs" ALTER COLUMN "outputs" SET STORAGE EXTERNAL;
