import type { DataType } from '@inferq/contracts';
import type { Pool } from '../connection/pool.ts';

// Clients' uploads of one input tensor each (POST /v1/uploads, migration 0021):
// what the presigned URL was issued for, used once by the submit that names it.

export interface UploadRecord {
  id: string;
  ownerKeyId: string;
  datatype: DataType;
  shape: number[];
  bytes: number;
  objectKey: string;
  createdAt: Date;
  expiresAt: Date;
  claimedAt: Date | null;
  claimedByJob: string | null;
}

export type NewUpload = Pick<UploadRecord, 'id' | 'ownerKeyId' | 'datatype' | 'shape' | 'bytes' | 'objectKey' | 'createdAt' | 'expiresAt'>;

interface UploadRow {
  id: string;
  owner_key_id: string;
  datatype: DataType;
  shape: number[];
  bytes: number;
  object_key: string;
  created_at: Date;
  expires_at: Date;
  claimed_at: Date | null;
  claimed_by_job: string | null;
}

const toRecord = (r: UploadRow): UploadRecord => ({
  id: r.id,
  ownerKeyId: r.owner_key_id,
  datatype: r.datatype,
  shape: r.shape,
  bytes: r.bytes,
  objectKey: r.object_key,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  claimedAt: r.claimed_at,
  claimedByJob: r.claimed_by_job,
});

export async function insertUpload(pool: Pool, u: NewUpload): Promise<UploadRecord> {
  const { rows } = await pool.query<UploadRow>(
    `INSERT INTO uploads (id, owner_key_id, datatype, shape, bytes, object_key, created_at, expires_at)
     VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8) RETURNING *`,
    [u.id, u.ownerKeyId, u.datatype, JSON.stringify(u.shape), u.bytes, u.objectKey, u.createdAt, u.expiresAt],
  );
  return toRecord(rows[0]!);
}

/** The owner's upload when it can still be used (unclaimed, unexpired); undefined otherwise, whatever the reason (another key's looks missing). */
export async function findUsableUpload(pool: Pool, id: string, ownerKeyId: string): Promise<UploadRecord | undefined> {
  const { rows } = await pool.query<UploadRow>(`SELECT * FROM uploads WHERE id = $1 AND owner_key_id = $2 AND claimed_at IS NULL AND expires_at > now()`, [
    id,
    ownerKeyId,
  ]);
  return rows[0] && toRecord(rows[0]);
}

/**
 * Claims the upload for `jobId` in one statement: only the owner's, only unclaimed and unexpired, so of two
 * submits naming it one wins. The claimed row; undefined when it was not usable.
 */
export async function claimUpload(pool: Pool, id: string, ownerKeyId: string, jobId: string): Promise<UploadRecord | undefined> {
  const { rows } = await pool.query<UploadRow>(
    `UPDATE uploads SET claimed_at = now(), claimed_by_job = $3
      WHERE id = $1 AND owner_key_id = $2 AND claimed_at IS NULL AND expires_at > now()
      RETURNING *`,
    [id, ownerKeyId, jobId],
  );
  return rows[0] && toRecord(rows[0]);
}

/** Gives a claim back (the copy into the job failed): the upload can be named again until it expires. */
export async function releaseUpload(pool: Pool, id: string, jobId: string): Promise<void> {
  await pool.query(`UPDATE uploads SET claimed_at = NULL, claimed_by_job = NULL WHERE id = $1 AND claimed_by_job = $2`, [id, jobId]);
}

/** An upload the sweep deleted: its object's key, and whether a job had taken it. */
export interface ExpiredUpload {
  objectKey: string;
  claimed: boolean;
}

/**
 * Deletes up to `limit` uploads past their expiry, oldest first, claimed or not, and returns them: an unclaimed
 * upload's object is still there; a claimed one's was deleted at the claim, unless that delete failed. Rows locked
 * by a concurrent claim are skipped.
 */
export async function deleteExpiredUploads(pool: Pool, limit: number): Promise<ExpiredUpload[]> {
  const { rows } = await pool.query<{ object_key: string; claimed: boolean }>(
    `DELETE FROM uploads WHERE id IN (
       SELECT id FROM uploads WHERE expires_at <= now() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
     RETURNING object_key, claimed_at IS NOT NULL AS claimed`,
    [limit],
  );
  return rows.map((r) => ({ objectKey: r.object_key, claimed: r.claimed }));
}
