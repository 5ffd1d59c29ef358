import { createPeriodicTask, type Logger } from '@inferq/core';
import { deleteExpiredUploads, type Pool } from '@inferq/db';
import { isRedisOutageError, withLease, type RedisClient } from '@inferq/queue';
import type { Storage } from '@inferq/storage';

/** The name of the upload sweep's lease: one API replica sweeps at a time. */
export const UPLOADS_PASS = 'uploads-expiry';
/** Longer than any pass takes; a replica that dies holding the lease lets the next one sweep after it. */
const LEASE_MS = 10 * 60_000;
/** Rows deleted per statement (S3's DeleteObjects takes at most 1,000 keys). */
const BATCH = 1_000;
/** Statements per pass: a backlog larger than this is finished by the next passes. */
const MAX_BATCHES = 100;

export interface UploadsSweeperDeps {
  pool: Pool;
  redis: RedisClient;
  /** The queue prefix the lease lives under. */
  prefix: string;
  storage: Pick<Storage, 'deleteObjects'>;
  logger: Logger;
  intervalMs: number;
  /** Counts uploads deleted unused (expired before any job claimed them). */
  onExpired?(count: number): void;
}

export interface UploadsSweepResult {
  /** Rows deleted: uploads past UPLOAD_TTL_S, used or not. */
  deleted: number;
  /** Of them, those no job used (their objects deleted here). */
  unused: number;
}

/**
 * Deletes uploads past their expiry (UPLOAD_TTL_S), every interval, on one API replica at a time (a lease in
 * Redis): rows in batches, each batch's objects right after (an unused upload's object; a used one's was deleted
 * at the claim, so deleting its key again only catches a delete that failed then). Should the process die between
 * the two, or a delete fail, the bucket's expiry rule on `uploads/` removes the objects.
 */
export function createUploadsSweeper(deps: UploadsSweeperDeps) {
  async function pass(): Promise<UploadsSweepResult> {
    const startedAt = Date.now();
    let deleted = 0;
    let unused = 0;
    for (let i = 0; i < MAX_BATCHES; i++) {
      const expired = await deleteExpiredUploads(deps.pool, BATCH);
      if (expired.length === 0) break;
      deleted += expired.length;
      const unusedNow = expired.filter((u) => !u.claimed).length;
      unused += unusedNow;
      deps.onExpired?.(unusedNow);
      await deps.storage.deleteObjects(expired.map((u) => u.objectKey));
      if (expired.length < BATCH) break;
    }
    const result = { deleted, unused };
    if (deleted > 0) deps.logger.info({ ...result, ms: Date.now() - startedAt }, 'expired uploads deleted');
    return result;
  }

  /** One pass; undefined when another replica holds the lease. */
  const sweepOnce = (): Promise<UploadsSweepResult | undefined> => withLease(deps.redis, deps.prefix, UPLOADS_PASS, LEASE_MS, pass);

  return {
    sweepOnce,
    ...createPeriodicTask({ what: 'upload sweep', intervalMs: deps.intervalMs, logger: deps.logger, run: sweepOnce, expected: isRedisOutageError }),
  };
}
