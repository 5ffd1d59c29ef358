import { createPeriodicTask, type Logger } from '@inferq/core';
import type { Pool } from '@inferq/db';
import { isRedisOutageError, withLease, type RedisClient } from '@inferq/queue';
import type { Storage } from '@inferq/storage';

/** Longer than any pass takes; a replica that dies holding the lease lets the next one sweep after it. */
const LEASE_MS = 10 * 60_000;
/** Rows deleted per statement (S3's DeleteObjects takes at most 1,000 keys). */
const BATCH = 1_000;
/** Statements per pass: a backlog larger than this is finished by the next passes. */
const MAX_BATCHES = 100;

/** What a sweeper of expired rows and their objects is started with. */
export interface ExpirySweeperDeps {
  pool: Pool;
  redis: RedisClient;
  /** The queue prefix the lease lives under. */
  prefix: string;
  storage: Pick<Storage, 'deleteObjects'>;
  logger: Logger;
  intervalMs: number;
}

export interface ExpirySweepDeps<R extends { objectKey: string }> extends Omit<ExpirySweeperDeps, 'pool'> {
  /** The lease's name (one API replica sweeps at a time) and what the task is called in logs. */
  lease: string;
  what: string;
  /** Deletes up to `limit` rows past their expiry and returns them, each with its object's key. */
  deleteExpired(limit: number): Promise<R[]>;
  /** After a pass that deleted rows: all of them, and how long it took. */
  onSwept?(rows: R[], ms: number): void;
}

/**
 * Deletes rows past their expiry and their objects, every interval, on one API replica at a time (a lease in Redis):
 * rows in statements of 1,000, each statement's objects right after. Should the process die between the two, or a
 * delete fail, the objects stay behind without a row (nothing reads them; a bucket rule or a later delete takes them).
 */
export function createExpirySweep<R extends { objectKey: string }>(deps: ExpirySweepDeps<R>) {
  async function pass(): Promise<R[]> {
    const startedAt = Date.now();
    const swept: R[] = [];
    for (let i = 0; i < MAX_BATCHES; i++) {
      const expired = await deps.deleteExpired(BATCH);
      if (expired.length === 0) break;
      swept.push(...expired);
      await deps.storage.deleteObjects(expired.map((r) => r.objectKey));
      if (expired.length < BATCH) break;
    }
    if (swept.length > 0) deps.onSwept?.(swept, Date.now() - startedAt);
    return swept;
  }

  /** One pass: the rows deleted; undefined when another replica holds the lease. */
  const sweepOnce = (): Promise<R[] | undefined> => withLease(deps.redis, deps.prefix, deps.lease, LEASE_MS, pass);

  return {
    sweepOnce,
    ...createPeriodicTask({ what: deps.what, intervalMs: deps.intervalMs, logger: deps.logger, run: sweepOnce, expected: isRedisOutageError }),
  };
}
