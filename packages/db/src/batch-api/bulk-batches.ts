import type { Pool, PoolClient } from '../connection/pool.ts';

// Batch API batches (POST /v1/batches, migration 0024) and their lines. The
// table is bulk_batches because `batches` holds the inference batches a worker
// ran. An API replica advances a batch while it holds its lease (lease_until);
// `submitted` is the file's last line submitted as a job (lines go in order).

export type BulkBatchStatus = 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';

export interface BulkBatchError {
  code: string;
  message: string;
  /** The file's line (1-based, as OpenAI counts), when the error is about one. */
  line: number | null;
  param: string | null;
}

export interface BulkBatchRecord {
  id: string;
  ownerKeyId: string;
  endpoint: string;
  inputFileId: string;
  completionWindow: string;
  metadata: Record<string, string> | null;
  status: BulkBatchStatus;
  total: number;
  submitted: number;
  completed: number;
  failed: number;
  outputFileId: string | null;
  errorFileId: string | null;
  errors: BulkBatchError[] | null;
  createdAt: Date;
  expiresAt: Date;
  inProgressAt: Date | null;
  finalizingAt: Date | null;
  completedAt: Date | null;
  failedAt: Date | null;
  expiredAt: Date | null;
  cancellingAt: Date | null;
  cancelledAt: Date | null;
  /** Seconds its output and error files are kept once written (output_expires_after); null: until deleted. */
  outputExpiresAfterS: number | null;
  /** The multipart uploads its output and error files are written into while it runs (migration 0027). */
  outputUploadId: string | null;
  errorsUploadId: string | null;
}

export type NewBulkBatch = Pick<
  BulkBatchRecord,
  'id' | 'ownerKeyId' | 'endpoint' | 'inputFileId' | 'completionWindow' | 'metadata' | 'createdAt' | 'expiresAt' | 'outputExpiresAfterS'
>;

type Row = Record<string, unknown>;
const toRecord = (r: Row): BulkBatchRecord => ({
  id: r.id as string,
  ownerKeyId: r.owner_key_id as string,
  endpoint: r.endpoint as string,
  inputFileId: r.input_file_id as string,
  completionWindow: r.completion_window as string,
  metadata: r.metadata as Record<string, string> | null,
  status: r.status as BulkBatchStatus,
  total: r.total as number,
  submitted: r.submitted as number,
  completed: r.completed as number,
  failed: r.failed as number,
  outputFileId: r.output_file_id as string | null,
  errorFileId: r.error_file_id as string | null,
  errors: r.errors as BulkBatchError[] | null,
  createdAt: r.created_at as Date,
  expiresAt: r.expires_at as Date,
  inProgressAt: r.in_progress_at as Date | null,
  finalizingAt: r.finalizing_at as Date | null,
  completedAt: r.completed_at as Date | null,
  failedAt: r.failed_at as Date | null,
  expiredAt: r.expired_at as Date | null,
  cancellingAt: r.cancelling_at as Date | null,
  cancelledAt: r.cancelled_at as Date | null,
  outputExpiresAfterS: r.output_expires_after_s as number | null,
  outputUploadId: r.output_upload_id as string | null,
  errorsUploadId: r.errors_upload_id as string | null,
});

export async function insertBulkBatch(pool: Pool, b: NewBulkBatch): Promise<BulkBatchRecord> {
  const { rows } = await pool.query(
    `INSERT INTO bulk_batches (id, owner_key_id, endpoint, input_file_id, completion_window, metadata, created_at, expires_at, output_expires_after_s)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
    [b.id, b.ownerKeyId, b.endpoint, b.inputFileId, b.completionWindow, b.metadata, b.createdAt, b.expiresAt, b.outputExpiresAfterS],
  );
  return toRecord(rows[0]!);
}

/** The batch when it is the owner's (any key's for null); undefined otherwise. */
export async function findBulkBatch(pool: Pool, id: string, ownerKeyId: string | null): Promise<BulkBatchRecord | undefined> {
  const { rows } = await pool.query('SELECT * FROM bulk_batches WHERE id = $1 AND ($2::uuid IS NULL OR owner_key_id = $2)', [id, ownerKeyId]);
  return rows[0] && toRecord(rows[0]);
}

/** A key's batches (every key's for null), newest first, after the batch `after` when given. */
export async function listBulkBatches(pool: Pool, o: { ownerKeyId: string | null; after?: string; limit: number }): Promise<BulkBatchRecord[]> {
  const { rows } = await pool.query(
    `SELECT * FROM bulk_batches
      WHERE ($1::uuid IS NULL OR owner_key_id = $1)
        AND ($2::text IS NULL OR (created_at, id) < (SELECT created_at, id FROM bulk_batches WHERE id = $2))
      ORDER BY created_at DESC, id DESC LIMIT $3`,
    [o.ownerKeyId, o.after ?? null, o.limit],
  );
  return rows.map(toRecord);
}

/** SQL true while a batch not yet ended reads the file `fileId` (an SQL expression): it may not be deleted then, by a client or by expiry. */
export const fileReadSql = (fileId: string): string =>
  `EXISTS (SELECT 1 FROM bulk_batches WHERE input_file_id = ${fileId} AND status IN ('validating', 'in_progress', 'cancelling'))`;

/** Whether a batch not yet ended reads this file (it may not be deleted then). */
export async function fileInUse(pool: Pool, fileId: string): Promise<boolean> {
  const { rows } = await pool.query<{ read: boolean }>(`SELECT ${fileReadSql('$1')} AS read`, [fileId]);
  return rows[0]!.read;
}

/**
 * Takes, for `owner`, the lease of the oldest active batch nobody holds (or whose holder let its lease run out), for
 * `leaseMs`; `skip`: batches this process runs already. Undefined when there is none.
 */
export async function leaseBulkBatch(pool: Pool, owner: string, leaseMs: number, skip: readonly string[]): Promise<BulkBatchRecord | undefined> {
  const { rows } = await pool.query(
    `UPDATE bulk_batches SET lease_owner = $1, lease_until = now() + $2 * interval '1 millisecond'
      WHERE id = (SELECT id FROM bulk_batches
                   WHERE status IN ('validating', 'in_progress', 'finalizing', 'cancelling') AND (lease_until IS NULL OR lease_until < now())
                     AND NOT (id = ANY($3::text[]))
                   ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING *`,
    [owner, leaseMs, skip],
  );
  return rows[0] && toRecord(rows[0]);
}

/** Extends `owner`'s live lease; the batch as it is now (a cancel may have arrived), or undefined when the lease was lost. */
export async function renewBulkBatchLease(pool: Pool, id: string, owner: string, leaseMs: number): Promise<BulkBatchRecord | undefined> {
  const { rows } = await pool.query(
    `UPDATE bulk_batches SET lease_until = now() + $3 * interval '1 millisecond'
      WHERE id = $1 AND lease_owner = $2 AND lease_until > now() RETURNING *`,
    [id, owner, leaseMs],
  );
  return rows[0] && toRecord(rows[0]);
}

/** Gives `owner`'s lease up (the batch ended, or the process is stopping) so another replica may take it at once. */
export async function releaseBulkBatchLease(pool: Pool, id: string, owner: string): Promise<void> {
  await pool.query('UPDATE bulk_batches SET lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2', [id, owner]);
}

/** The fields a runner moves; a status's timestamp is set with it. */
export interface BulkBatchChange {
  status?: BulkBatchStatus;
  total?: number;
  completed?: number;
  failed?: number;
  outputFileId?: string | null;
  errorFileId?: string | null;
  errors?: BulkBatchError[];
}

const STATUS_TIME: Partial<Record<BulkBatchStatus, string>> = {
  in_progress: 'in_progress_at',
  finalizing: 'finalizing_at',
  completed: 'completed_at',
  failed: 'failed_at',
  expired: 'expired_at',
  cancelling: 'cancelling_at',
  cancelled: 'cancelled_at',
};

const COLUMN: Record<Exclude<keyof BulkBatchChange, 'status'>, string> = {
  total: 'total',
  completed: 'completed',
  failed: 'failed',
  outputFileId: 'output_file_id',
  errorFileId: 'error_file_id',
  errors: 'errors',
};

/** Applies the change; with `from`, only while the batch is in one of those statuses. The batch after it, or undefined when it was not. */
export async function updateBulkBatch(
  pool: Pool,
  id: string,
  change: BulkBatchChange,
  from?: readonly BulkBatchStatus[],
): Promise<BulkBatchRecord | undefined> {
  const sets: string[] = [];
  const params: unknown[] = [id];
  for (const [key, value] of Object.entries(change) as Array<[keyof BulkBatchChange, unknown]>) {
    if (value === undefined) continue;
    params.push(key === 'errors' ? JSON.stringify(value) : value);
    if (key === 'status') {
      sets.push(`status = $${params.length}`);
      const at = STATUS_TIME[value as BulkBatchStatus];
      if (at) sets.push(`${at} = coalesce(${at}, now())`);
    } else sets.push(`${COLUMN[key]} = $${params.length}`);
  }
  params.push(from ?? null);
  const { rows } = await pool.query(
    `UPDATE bulk_batches SET ${sets.join(', ')} WHERE id = $1 AND ($${params.length}::text[] IS NULL OR status = ANY($${params.length}::text[])) RETURNING *`,
    params,
  );
  return rows[0] && toRecord(rows[0]);
}

/**
 * Asks every batch of a key that has not ended to cancel (`cancelling`, as POST /v1/batches/:id/cancel does): a
 * revoked key submits nothing more. Their runners cancel the queued jobs and end them as `cancelled`. Returns their ids.
 */
export async function cancelBulkBatchesOfKey(pool: Pool | PoolClient, ownerKeyId: string): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    `UPDATE bulk_batches SET status = 'cancelling', cancelling_at = coalesce(cancelling_at, now())
      WHERE owner_key_id = $1 AND status IN ('validating', 'in_progress') RETURNING id`,
    [ownerKeyId],
  );
  return rows.map((r) => r.id);
}

/** The batches not yet ended, as the metrics read them (few: each is a large offline run). */
export async function readActiveBulkBatches(pool: Pool): Promise<BulkBatchRecord[]> {
  const { rows } = await pool.query(
    `SELECT * FROM bulk_batches WHERE status IN ('validating', 'in_progress', 'finalizing', 'cancelling') ORDER BY created_at LIMIT 1000`,
  );
  return rows.map(toRecord);
}
