import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { AuditAction, DEFAULT_KEY_WEIGHT, type Scope } from '@inferq/contracts';
import {
  findApiKeyByPrefix,
  insertApiKeys,
  insertAuditEntries,
  listApiKeys,
  revokeApiKeys,
  cancelBulkBatchesOfKey,
  updateApiKey,
  withTransaction,
  type ApiKeyChanges,
  type ApiKeyRecord,
  type Pool,
} from '@inferq/db';
import { auditEntry, type AuditActor } from './audit-service.ts';

/** The stored key the service returns; routes take the type from here, never from packages/db (api-routes-through-services). */
export type { ApiKeyRecord } from '@inferq/db';

const KEY_RE = /^iq_([A-Za-z0-9]{12})_([A-Za-z0-9]{16,128})$/;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

const randomText = (length: number): string => Array.from(randomBytes(length), (b) => ALPHABET[b % ALPHABET.length]).join('');

const hashSecret = (key: string): string => createHash('sha256').update(key).digest('hex');

/** A new key `iq_<prefix>_<secret>`: the prefix is stored and shown, the whole key only hashed. */
const generateApiKey = (): string => `iq_${randomText(12)}_${randomText(32)}`;

export interface Principal {
  keyId: string;
  scopes: readonly Scope[];
  isAdmin: boolean;
  /** Requests per minute; null: the server's default. */
  rateLimitPerMin: number | null;
  /** Share of each model's queue against other keys at the same priority (1..1000). */
  weight: number;
}

/** The owner filter for a principal: admins see every job. */
export const ownerFilter = (p: Principal): string | null => (p.isAdmin ? null : p.keyId);

interface CreateKeyOptions {
  /** The whole key to store (the bootstrap admin key); a new one is generated otherwise. */
  key?: string;
  rateLimitPerMin?: number | null;
  /** @default 1 */
  weight?: number;
  /** Who asked, for the audit log; keys the server makes itself (bootstrap, tests) have none and are not audited. */
  actor?: AuditActor;
}

export interface ApiKeysService {
  authenticate(key: string): Promise<Principal | undefined>;
  createKey(name: string, scopes: Scope[], options?: CreateKeyOptions): Promise<{ record: ApiKeyRecord; secret: string }>;
  listKeys(): Promise<ApiKeyRecord[]>;
  revokeKey(id: string, actor: AuditActor): Promise<ApiKeyRecord | undefined>;
  /** Changes a key's settings (its retention); undefined when there is no such key. Audited as `key:updated`. */
  updateKey(id: string, changes: ApiKeyChanges, actor: AuditActor): Promise<ApiKeyRecord | undefined>;
}

export function createApiKeysService(pool: Pool, options: { cacheTtlMs: number }): ApiKeysService {
  // Verified keys are cached briefly so the hot submit path skips a query; revocation waits out the TTL.
  const cache = new Map<string, { principal: Principal; expiresAtMs: number }>();
  return {
    async authenticate(key) {
      const cached = cache.get(key);
      if (cached && cached.expiresAtMs > Date.now()) return cached.principal;
      const match = KEY_RE.exec(key);
      if (!match) return undefined;
      const record = await findApiKeyByPrefix(pool, match[1]!);
      if (!record || record.revokedAt) return undefined;
      const expected = Buffer.from(record.secretHash, 'hex');
      const actual = Buffer.from(hashSecret(key), 'hex');
      if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return undefined;
      const principal: Principal = {
        keyId: record.id,
        scopes: record.scopes,
        isAdmin: record.scopes.includes('admin'),
        rateLimitPerMin: record.rateLimitPerMin,
        weight: record.weight,
      };
      if (cache.size > 10_000) cache.clear();
      cache.set(key, { principal, expiresAtMs: Date.now() + options.cacheTtlMs });
      return principal;
    },
    async createKey(name, scopes, { key = generateApiKey(), rateLimitPerMin = null, weight = DEFAULT_KEY_WEIGHT, actor } = {}) {
      const match = KEY_RE.exec(key);
      if (!match) throw new Error('malformed API key');
      const record = await withTransaction(pool, async (client) => {
        const [created] = await insertApiKeys(client, [
          { id: randomUUID(), name, prefix: match[1]!, secretHash: hashSecret(key), scopes, rateLimitPerMin, weight },
        ]);
        if (actor)
          await insertAuditEntries(client, [auditEntry(actor, AuditAction.KeyCreated, `keys/${created!.id}`, { name, scopes, rateLimitPerMin, weight })]);
        return created!;
      });
      return { record, secret: key };
    },
    listKeys: () => listApiKeys(pool),
    updateKey: (id, changes, actor) =>
      withTransaction(pool, async (client) => {
        const updated = await updateApiKey(client, id, changes);
        if (updated) await insertAuditEntries(client, [auditEntry(actor, AuditAction.KeyUpdated, `keys/${id}`, { ...changes })]);
        return updated;
      }),
    async revokeKey(id, actor) {
      const record = await withTransaction(pool, async (client) => {
        const [revoked] = await revokeApiKeys(client, [id]);
        if (!revoked) return undefined;
        // A revoked key submits nothing more: its Batch API batches that have not ended are cancelled.
        const batchesCancelled = await cancelBulkBatchesOfKey(client, id);
        await insertAuditEntries(client, [auditEntry(actor, AuditAction.KeyRevoked, `keys/${id}`, { name: revoked.name, batchesCancelled })]);
        return revoked;
      });
      // After the commit, so a request in between cannot cache the key again.
      cache.clear();
      return record;
    },
  };
}
