import type { AuditAction, AuditEntry } from '@inferq/contracts';
import { deleteCreatedBefore, type ChunkedDeleteOptions } from '../sql/chunked-delete.ts';
import type { Pool, PoolClient } from '../connection/pool.ts';

interface AuditRow {
  id: number;
  actor_key_id: string | null;
  action: AuditAction;
  resource: string;
  details: Record<string, unknown>;
  created_at: Date;
}

const toEntry = (r: AuditRow): AuditEntry => ({
  id: r.id,
  actorKeyId: r.actor_key_id,
  action: r.action,
  resource: r.resource,
  details: r.details,
  createdAt: r.created_at.toISOString(),
});

export type NewAuditEntry = Omit<AuditEntry, 'id' | 'createdAt'>;

/** Takes a transaction's client so an action and its entry commit together. */
export async function insertAuditEntries(pool: Pool | PoolClient, entries: NewAuditEntry[]): Promise<void> {
  await pool.query(
    `INSERT INTO audit_log (actor_key_id, action, resource, details)
     SELECT e.actor_key_id, e.action, e.resource, e.details
       FROM jsonb_to_recordset($1::jsonb) AS e(actor_key_id uuid, action text, resource text, details jsonb)`,
    [JSON.stringify(entries.map((e) => ({ actor_key_id: e.actorKeyId, action: e.action, resource: e.resource, details: e.details })))],
  );
}

/** Newest first, keyset-paginated on the serial id (its primary key index serves every page). */
export async function listAuditEntries(pool: Pool, f: { beforeId?: number; limit: number }): Promise<AuditEntry[]> {
  const { rows } = await pool.query<AuditRow>(`SELECT * FROM audit_log WHERE ($1::bigint IS NULL OR id < $1) ORDER BY id DESC LIMIT $2`, [
    f.beforeId ?? null,
    f.limit,
  ]);
  return rows.map(toEntry);
}

/** Deletes the audit entries written before `before` (AUDIT_RETENTION_S), in bounded chunks (deleteCreatedBefore); returns how many. */
export const deleteAuditEntriesBefore = (pool: Pool, before: Date, options?: ChunkedDeleteOptions): Promise<number> =>
  deleteCreatedBefore(pool, 'audit_log', before, options);
