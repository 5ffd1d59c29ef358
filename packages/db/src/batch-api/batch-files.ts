import { fileReadSql } from './bulk-batches.ts';
import type { Pool } from '../connection/pool.ts';

// Batch API files (migration 0024): JSONL a client uploaded (purpose batch) and
// the output and error files a batch wrote (batch_output). The bytes are in
// object storage; the row says whose, how large and where.

export type FilePurpose = 'batch' | 'batch_output';

export interface FileRecord {
  id: string;
  ownerKeyId: string;
  purpose: FilePurpose;
  filename: string;
  bytes: number;
  objectKey: string;
  createdAt: Date;
  /** When the file sweep deletes it; null: kept until deleted. */
  expiresAt: Date | null;
}

interface FileRow {
  id: string;
  owner_key_id: string;
  purpose: FilePurpose;
  filename: string;
  bytes: string;
  object_key: string;
  created_at: Date;
  expires_at: Date | null;
}

const toRecord = (r: FileRow): FileRecord => ({
  id: r.id,
  ownerKeyId: r.owner_key_id,
  purpose: r.purpose,
  filename: r.filename,
  bytes: Number(r.bytes),
  objectKey: r.object_key,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
});

/** Records a file whose object is written; a second insert of the same id (a batch's output written again) keeps the first. */
export async function insertFile(pool: Pool, f: FileRecord): Promise<void> {
  await pool.query(
    `INSERT INTO files (id, owner_key_id, purpose, filename, bytes, object_key, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO UPDATE SET bytes = EXCLUDED.bytes`,
    [f.id, f.ownerKeyId, f.purpose, f.filename, f.bytes, f.objectKey, f.createdAt, f.expiresAt],
  );
}

/** The file when it is the owner's (any key's for null: an admin); undefined otherwise. */
export async function findFile(pool: Pool, id: string, ownerKeyId: string | null): Promise<FileRecord | undefined> {
  const { rows } = await pool.query<FileRow>('SELECT * FROM files WHERE id = $1 AND ($2::uuid IS NULL OR owner_key_id = $2)', [id, ownerKeyId]);
  return rows[0] && toRecord(rows[0]);
}

/** A key's files (every key's for null), newest first, after the file `after` when given. */
export async function listFiles(pool: Pool, o: { ownerKeyId: string | null; purpose?: FilePurpose; after?: string; limit: number }): Promise<FileRecord[]> {
  const { rows } = await pool.query<FileRow>(
    `SELECT * FROM files
      WHERE ($1::uuid IS NULL OR owner_key_id = $1) AND ($2::text IS NULL OR purpose = $2)
        AND ($3::text IS NULL OR (created_at, id) < (SELECT created_at, id FROM files WHERE id = $3))
      ORDER BY created_at DESC, id DESC LIMIT $4`,
    [o.ownerKeyId, o.purpose ?? null, o.after ?? null, o.limit],
  );
  return rows.map(toRecord);
}

/** Deletes the row (the caller deletes the object); false when it was not there. */
export async function deleteFile(pool: Pool, id: string): Promise<boolean> {
  const { rowCount } = await pool.query('DELETE FROM files WHERE id = $1', [id]);
  return (rowCount ?? 0) > 0;
}

/**
 * Deletes up to `limit` files past their expiry that no batch still running reads (those wait for it to end);
 * returns their object keys for the caller to delete.
 */
export async function deleteExpiredFiles(pool: Pool, limit: number): Promise<Array<{ id: string; objectKey: string }>> {
  const { rows } = await pool.query<{ id: string; object_key: string }>(
    `DELETE FROM files WHERE id IN (
       SELECT f.id FROM files f
        WHERE f.expires_at <= now()
          AND NOT ${fileReadSql('f.id')}
        ORDER BY f.expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
     RETURNING id, object_key`,
    [limit],
  );
  return rows.map((r) => ({ id: r.id, objectKey: r.object_key }));
}
