import type { AuditAction, AuditEntry, ListAuditQuery } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import { listAuditEntries, type NewAuditEntry, type Pool } from '@inferq/db';

/** Who did an admin action: the caller's key and the request it came in. */
export interface AuditActor {
  keyId: string;
  requestId: string;
}

export const auditEntry = (actor: AuditActor, action: AuditAction, resource: string, details: Record<string, unknown>): NewAuditEntry => ({
  actorKeyId: actor.keyId,
  action,
  resource,
  details: { requestId: actor.requestId, ...details },
});

const encodeCursor = (entry: AuditEntry): string => Buffer.from(String(entry.id)).toString('base64url');
function decodeCursor(cursor: string): number {
  const id = Number(Buffer.from(cursor, 'base64url').toString());
  if (!Number.isSafeInteger(id) || id < 1)
    throw new AppError('VALIDATION_FAILED', 'cursor is not valid', {
      errors: [{ pointer: '/querystring/cursor', code: 'VALIDATION_FAILED', detail: 'not a cursor from nextCursor' }],
    });
  return id;
}

export interface AuditService {
  listEntries(query: ListAuditQuery): Promise<{ items: AuditEntry[]; nextCursor: string | null }>;
}

export function createAuditService(pool: Pool): AuditService {
  return {
    async listEntries(q) {
      const limit = q.limit ?? 50;
      const rows = await listAuditEntries(pool, { beforeId: q.cursor ? decodeCursor(q.cursor) : undefined, limit: limit + 1 });
      const items = rows.slice(0, limit);
      return { items, nextCursor: rows.length > limit ? encodeCursor(items[items.length - 1]!) : null };
    },
  };
}
