-- An operator's pause of a model's queue (issue 27). BullMQ's pause flag in
-- Redis is what workers obey; this row is the record of it, so a Redis that
-- lost its data (a flush, a restart without persistence, a failover to a
-- replica that missed the write) gets the pause back from the worker's
-- reconciler instead of running a paused model's jobs. A model with no row
-- has never been paused or resumed through the API since this migration.
CREATE TABLE "model_queue_pauses" (
    "model_name" TEXT NOT NULL,
    "paused" BOOLEAN NOT NULL,
    "changed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    CONSTRAINT "model_queue_pauses_pkey" PRIMARY KEY ("model_name")
);
