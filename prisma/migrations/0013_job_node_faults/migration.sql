-- Workers that gave a job back because of a fault of their own (model
-- download, credentials, disk, a model that would not load there): the job's
-- attempts are not spent on them. A load failure that follows the job to a
-- second worker is the model's fault, and then the job fails. A constant
-- default: no table rewrite (PostgreSQL 11+).
ALTER TABLE "jobs" ADD COLUMN "node_faults" TEXT[] NOT NULL DEFAULT '{}';
