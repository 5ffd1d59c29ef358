import { deleteExpiredUploads, type ExpiredUpload } from '@inferq/db';
import { createExpirySweep, type ExpirySweeperDeps } from './expiry-sweep.ts';

/** The name of the upload sweep's lease: one API replica sweeps at a time. */
const UPLOADS_PASS = 'uploads-expiry';

export interface UploadsSweeperDeps extends ExpirySweeperDeps {
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
  const summary = (rows: ExpiredUpload[]): UploadsSweepResult => ({ deleted: rows.length, unused: rows.filter((u) => !u.claimed).length });
  const sweep = createExpirySweep({
    ...deps,
    lease: UPLOADS_PASS,
    what: 'upload sweep',
    deleteExpired: (limit) => deleteExpiredUploads(deps.pool, limit),
    onSwept(rows, ms) {
      const result = summary(rows);
      deps.onExpired?.(result.unused);
      deps.logger.info({ ...result, ms }, 'expired uploads deleted');
    },
  });
  /** One pass; undefined when another replica holds the lease. */
  const sweepOnce = async (): Promise<UploadsSweepResult | undefined> => {
    const rows = await sweep.sweepOnce();
    return rows && summary(rows);
  };
  return { ...sweep, sweepOnce };
}
