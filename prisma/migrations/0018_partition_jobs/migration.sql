-- Partitioning jobs, step 3 of 4: jobs becomes a table partitioned by RANGE
-- (id) (UUIDv7: time order), the old table its first partition jobs_legacy
-- (MINVALUE up to 0016's bound), followed by daily partitions jobs_pYYYYMMDD.
-- The API creates the days ahead itself (job-partitions.ts); retention can
-- then drop whole partitions. Catalogue work only: the old table is attached
-- without a scan (0017 validated its bound) and its indexes become the
-- partitions of the parent's indexes, none rebuilt: ~12 ms at 10M rows, under
-- ACCESS EXCLUSIVE on jobs and webhook_deliveries. lock_timeout: a long
-- transaction on jobs makes this fail (run it again) rather than queue every
-- request behind it. It needs the release that claims Idempotency-Keys in
-- job_idempotency: the previous one's INSERT … ON CONFLICT names the unique
-- index dropped here (docs/deploy.md, the upgrade order).
SET LOCAL lock_timeout = '10s';
LOCK TABLE jobs, webhook_deliveries IN ACCESS EXCLUSIVE MODE;

DROP TRIGGER jobs_record_idempotency_key ON jobs;
DROP FUNCTION jobs_record_idempotency_key();
DROP INDEX jobs_owner_key_id_idempotency_key_key;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_job_id_fkey;

ALTER TABLE jobs RENAME TO jobs_legacy;
ALTER INDEX jobs_pkey RENAME TO jobs_legacy_pkey;
-- Columns, defaults, NOT NULLs, CHECKs and storage (inputs and outputs EXTERNAL, 0004) as they are.
CREATE TABLE jobs (LIKE jobs_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE) PARTITION BY RANGE (id);
ALTER TABLE jobs DROP CONSTRAINT jobs_legacy_bound;
ALTER TABLE jobs ADD CONSTRAINT jobs_pkey PRIMARY KEY (id);
ALTER TABLE jobs ADD CONSTRAINT jobs_owner_key_id_fkey FOREIGN KEY (owner_key_id) REFERENCES api_keys(id) ON DELETE RESTRICT;

-- Every other index of the old table, whatever the migrations before made:
-- the old one is renamed jobs_legacy_…, the parent gets the same definition
-- under the old name, and ATTACH PARTITION below adopts the old index as its
-- partition instead of building one.
DO $$
DECLARE
  i record;
  parent_def text;
BEGIN
  FOR i IN
    SELECT c.relname AS name, pg_get_indexdef(c.oid) AS def
      FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
     WHERE x.indrelid = 'jobs_legacy'::regclass
       AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = c.oid)
  LOOP
    parent_def := regexp_replace(i.def, '^CREATE (UNIQUE )?INDEX \S+ ON (\S+\.)?jobs_legacy ', 'CREATE \1INDEX ' || quote_ident(i.name) || ' ON jobs ');
    IF parent_def = i.def THEN
      RAISE EXCEPTION 'unexpected index definition: %', i.def;
    END IF;
    EXECUTE format('ALTER INDEX %I RENAME TO %I', i.name,
                   CASE WHEN i.name LIKE 'jobs\_%' THEN 'jobs_legacy' || substr(i.name, 5) ELSE i.name || '_legacy' END);
    EXECUTE parent_def;
  END LOOP;
END $$;

DO $$
DECLARE
  bound uuid := (SELECT substring(pg_get_constraintdef(oid) FROM '''([0-9a-f-]{36})''')::uuid
                   FROM pg_constraint WHERE conrelid = 'jobs_legacy'::regclass AND conname = 'jobs_legacy_bound');
  ms bigint := ('x' || lpad(replace(substr(bound::text, 1, 13), '-', ''), 16, '0'))::bit(64)::bigint;
  day timestamp := to_timestamp(ms / 1000.0) AT TIME ZONE 'UTC';
  lo text;
  hi text;
BEGIN
  EXECUTE format('ALTER TABLE jobs ATTACH PARTITION jobs_legacy FOR VALUES FROM (MINVALUE) TO (%L)', bound);
  -- Three days past the bound; the API keeps JOB_PARTITIONS_AHEAD_DAYS ahead from then on.
  FOR n IN 0..2 LOOP
    lo := lpad(to_hex((extract(epoch FROM day + n * interval '1 day') * 1000)::bigint), 12, '0');
    hi := lpad(to_hex((extract(epoch FROM day + (n + 1) * interval '1 day') * 1000)::bigint), 12, '0');
    EXECUTE format('CREATE TABLE %I PARTITION OF jobs FOR VALUES FROM (%L) TO (%L)',
                   'jobs_p' || to_char(day + n * interval '1 day', 'YYYYMMDD'),
                   substr(lo, 1, 8) || '-' || substr(lo, 9, 4) || '-0000-0000-000000000000',
                   substr(hi, 1, 8) || '-' || substr(hi, 9, 4) || '-0000-0000-000000000000');
  END LOOP;
END $$;

-- Every parent index must now be valid, each with the old index as its partition (none built).
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_index WHERE indrelid = 'jobs'::regclass AND NOT indisvalid) THEN
    RAISE EXCEPTION 'an index of jobs has no partition on jobs_legacy';
  END IF;
END $$;

-- Re-added without a scan; 0019 validates it.
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_job_id_fkey
  FOREIGN KEY (job_id) REFERENCES jobs(id) ON DELETE CASCADE NOT VALID;
