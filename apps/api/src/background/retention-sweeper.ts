import { createPeriodicTask, type Logger } from '@inferq/core';
import { findExpiredJobIds, findInputsToDrop, type Pool } from '@inferq/db';
import { isRedisOutageError, withLease, type RedisClient } from '@inferq/queue';
import type { JobRetention } from '../services/jobs/job-retention-service.ts';

/** The name of the retention pass's lease: one API replica sweeps at a time. */
export const RETENTION_PASS = 'job-retention';
/** Rows per statement. */
const BATCH = 500;
/** Longer than any sweep takes; a replica that dies holding the lease lets the next one sweep after it. */
const LEASE_MS = 5 * 60_000;
/**
 * A sweep works full batches until this share of its interval (at most half the lease) has gone, so it keeps pace with
 * any rate its statements can, instead of a fixed number of batches (20 of 500 a minute kept pace with 167 jobs/s).
 */
const BUDGET_SHARE = 0.75;

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
  /** Told after each sweep whether it ended on its time budget with rows still due (it is falling behind). */
  onSwept?(behind: boolean): void;
  /** @default 500 (tests) */
  batchSize?: number;
  /** @default BUDGET_SHARE of the interval, at most half the lease (tests) */
  budgetMs?: number;
}

/**
 * Every interval, purges finished jobs past their retention and drops inputs
 * past the input retention, in batches for most of the interval while rows are
 * due, on one API replica at a time (a lease in Redis). Rows another sweeper or
 * a DELETE holds are skipped.
 */
export function createRetentionSweeper(deps: RetentionSweeperDeps) {
  const batch = deps.batchSize ?? BATCH;
  const budgetMs = deps.budgetMs ?? Math.min(deps.intervalMs * BUDGET_SHARE, LEASE_MS / 2);

  /** Full batches until none is left or `until` (a performance.now() time) has passed; `behind` when rows were still due. */
  async function work(until: number, find: () => Promise<string[]>, act: (ids: string[]) => Promise<{ ids: string[]; keys: string[] }>) {
    let jobs = 0;
    let objects = 0;
    for (;;) {
      const ids = await find();
      const done = await act(ids);
      jobs += done.ids.length;
      objects += done.keys.length;
      if (ids.length < batch || done.ids.length === 0) return { jobs, objects, behind: false };
      if (performance.now() >= until) return { jobs, objects, behind: true };
    }
  }

  /** One sweep; undefined when another replica holds the pass. */
  async function sweepOnce(): Promise<{ purged: number; inputsDropped: number; objectsDeleted: number; behind: boolean } | undefined> {
    return withLease(deps.redis, deps.prefix, RETENTION_PASS, LEASE_MS, async () => {
      const startedAt = performance.now();
      // Purges get half the budget, input drops the rest (with what purges left).
      const purged = await work(
        startedAt + budgetMs / 2,
        () => findExpiredJobIds(deps.pool, { defaultRetentionS: deps.jobRetentionS, limit: batch }),
        (ids) => deps.retention.purge(ids, 'retention', { skipLocked: true }),
      );
      const dropped = await work(
        startedAt + budgetMs,
        () => findInputsToDrop(deps.pool, { inputRetentionS: deps.inputRetentionS, limit: batch }),
        (ids) => deps.retention.dropInputs(ids, { skipLocked: true }),
      );
      const behind = purged.behind || dropped.behind;
      const result = { purged: purged.jobs, inputsDropped: dropped.jobs, objectsDeleted: purged.objects + dropped.objects, behind };
      const ms = Math.round(performance.now() - startedAt);
      if (behind) deps.logger.warn({ ...result, ms }, 'retention sweep ran out of time with jobs still due: it is falling behind');
      else if (result.purged + result.inputsDropped > 0) deps.logger.info({ ...result, ms }, 'retention sweep');
      deps.onSwept?.(behind);
      return result;
    });
  }

  return {
    sweepOnce,
    ...createPeriodicTask({ what: 'retention sweep', intervalMs: deps.intervalMs, logger: deps.logger, run: sweepOnce, expected: isRedisOutageError }),
  };
}
