import { deleteExpiredFiles } from '@inferq/db';
import { createExpirySweep, type ExpirySweeperDeps } from './expiry-sweep.ts';

/** The name of the file sweep's lease: one API replica sweeps at a time. */
const FILES_PASS = 'files-expiry';

/**
 * Deletes Batch API files past their `expires_at`, rows and objects, every interval, on one API replica at a time.
 * A file a batch still reads stays until that batch ends (deleteExpiredFiles).
 */
export function createFilesSweeper(deps: ExpirySweeperDeps) {
  return createExpirySweep({
    ...deps,
    lease: FILES_PASS,
    what: 'file sweep',
    deleteExpired: (limit) => deleteExpiredFiles(deps.pool, limit),
    onSwept: (rows, ms) => deps.logger.info({ deleted: rows.length, ms }, 'expired files deleted'),
  });
}
