-- Partitioning jobs, step 4 of 4: validates the foreign key from
-- webhook_deliveries to the partitioned jobs, re-added NOT VALID by 0018.
-- A scan of webhook_deliveries under SHARE UPDATE EXCLUSIVE (and ROW SHARE
-- on jobs): reads and writes go on.
ALTER TABLE webhook_deliveries VALIDATE CONSTRAINT webhook_deliveries_job_id_fkey;
