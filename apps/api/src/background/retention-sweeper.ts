import type { Logger } from '@inferq/core';
import { createPeriodicTask } from './periodic-task.ts';
import { findExpiredJobIds, findInputsToDrop, type Pool } from '@inferq/db';
import { withLease, type RedisClient } from '@inferq/queue';
import type { JobRetention } from '../services/job-retention-service.ts';

/** The name of the retention pass's lease: one API replica sweeps at a time. */
export const RETENTION_PASS = 'job-retention';
/** Rows per statement. */
const BATCH = 500;
/** Batches per kind and sweep: a large backlog is worked off over several sweeps, each of bounded length. */
const MAX_BATCHES = 20;
/** Longer than any sweep takes; a replica that dies holding the lease lets the next one sweep after it. */
const LEASE_MS = 5 * 60_000;

export interface RetentionSweeperDeps {
  pool: Pool;
  redis: RedisClient;
  /** The queue prefix the lease key lives under. */
  prefix: string;
  retention: Pick<JobRetention, 'purge' | 'dropInputs'>;
  logger: Logger;
  intervalMs: number;
  /** JOB_RETENTION_S: how long a finished job is kept when neither its model nor its key says otherwise. */
  jobRetentionS: number;
  /** JOB_INPUT_RETENTION_S: how long a finished job's inputs are kept unless it asked to keep them. */
  inputRetentionS: number;
}

/**
 * Every interval, purges finished jobs past their retention and drops inputs
 * past the input retention, in bounded batches, on one API replica at a time
 * (a lease in Redis). Rows another sweeper or a DELETE holds are skipped.
 */
export function createRetentionSweeper(deps: RetentionSweeperDeps) {
  async function work(find: () => Promise<string[]>, act: (ids: string[]) => Promise<{ ids: string[]; keys: string[] }>) {
    let jobs = 0;
    let objects = 0;
    for (let batch = 0; batch < MAX_BATCHES; batch++) {
      const ids = await find();
      const done = await act(ids);
      jobs += done.ids.length;
      objects += done.keys.length;
      if (ids.length < BATCH || done.ids.length === 0) break;
    }
    return { jobs, objects };
  }

  /** One sweep; undefined when another replica holds the pass. */
  async function sweepOnce(): Promise<{ purged: number; inputsDropped: number; objectsDeleted: number } | undefined> {
    return withLease(deps.redis, deps.prefix, RETENTION_PASS, LEASE_MS, async () => {
      const startedAt = Date.now();
      const purged = await work(
        () => findExpiredJobIds(deps.pool, { defaultRetentionS: deps.jobRetentionS, limit: BATCH }),
        (ids) => deps.retention.purge(ids, 'retention', { skipLocked: true }),
      );
      const dropped = await work(
        () => findInputsToDrop(deps.pool, { inputRetentionS: deps.inputRetentionS, limit: BATCH }),
        (ids) => deps.retention.dropInputs(ids, { skipLocked: true }),
      );
      const result = { purged: purged.jobs, inputsDropped: dropped.jobs, objectsDeleted: purged.objects + dropped.objects };
      if (result.purged + result.inputsDropped > 0) deps.logger.info({ ...result, ms: Date.now() - startedAt }, 'retention sweep');
      return result;
    });
  }

  return {
    sweepOnce,
    ...createPeriodicTask({ what: 'retention sweep', intervalMs: deps.intervalMs, logger: deps.logger, run: sweepOnce }),
  };
}
