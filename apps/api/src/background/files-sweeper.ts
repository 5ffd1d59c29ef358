import { createPeriodicTask, type Logger } from '@inferq/core';
import { deleteExpiredFiles, type Pool } from '@inferq/db';
import { isRedisOutageError, withLease, type RedisClient } from '@inferq/queue';
import type { Storage } from '@inferq/storage';

/** The name of the file sweep's lease: one API replica sweeps at a time. */
export const FILES_PASS = 'files-expiry';
/** Longer than any pass takes; a replica that dies holding the lease lets the next one sweep after it. */
const LEASE_MS = 10 * 60_000;
/** Rows deleted per statement (S3's DeleteObjects takes at most 1,000 keys). */
const BATCH = 1_000;
/** Statements per pass: a backlog larger than this is finished by the next passes. */
const MAX_BATCHES = 100;

export interface FilesSweeperDeps {
  pool: Pool;
  redis: RedisClient;
  /** The queue prefix the lease lives under. */
  prefix: string;
  storage: Pick<Storage, 'deleteObjects'>;
  logger: Logger;
  intervalMs: number;
}

/**
 * Deletes Batch API files past their `expires_at`, every interval, on one API replica at a time (a lease in Redis):
 * rows in batches, each batch's objects right after. A file a batch still reads stays until that batch ends. Should
 * the process die between the two, the objects stay behind under `files/` (a later delete of the same key is
 * harmless; nothing reads them without their row).
 */
export function createFilesSweeper(deps: FilesSweeperDeps) {
  async function pass(): Promise<number> {
    const startedAt = Date.now();
    let deleted = 0;
    for (let i = 0; i < MAX_BATCHES; i++) {
      const expired = await deleteExpiredFiles(deps.pool, BATCH);
      if (expired.length === 0) break;
      deleted += expired.length;
      await deps.storage.deleteObjects(expired.map((f) => f.objectKey));
      if (expired.length < BATCH) break;
    }
    if (deleted > 0) deps.logger.info({ deleted, ms: Date.now() - startedAt }, 'expired files deleted');
    return deleted;
  }

  /** One pass: the files deleted; undefined when another replica holds the lease. */
  const sweepOnce = (): Promise<number | undefined> => withLease(deps.redis, deps.prefix, FILES_PASS, LEASE_MS, pass);

  return {
    sweepOnce,
    ...createPeriodicTask({ what: 'file sweep', intervalMs: deps.intervalMs, logger: deps.logger, run: sweepOnce, expected: isRedisOutageError }),
  };
}
