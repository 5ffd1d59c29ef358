import type { ApiKey, Scope } from '@inferq/contracts';
import type { Pool, PoolClient } from '../connection/pool.ts';

export interface ApiKeyRecord extends ApiKey {
  secretHash: string;
}

interface ApiKeyRow {
  id: string;
  name: string;
  prefix: string;
  secret_hash: string;
  scopes: Scope[];
  rate_limit_per_min: number | null;
  weight: number;
  retention_s: number | null;
  created_at: Date;
  revoked_at: Date | null;
}

const toRecord = (r: ApiKeyRow): ApiKeyRecord => ({
  id: r.id,
  name: r.name,
  prefix: r.prefix,
  secretHash: r.secret_hash,
  scopes: r.scopes,
  rateLimitPerMin: r.rate_limit_per_min,
  weight: r.weight,
  retentionS: r.retention_s,
  createdAt: r.created_at.toISOString(),
  revokedAt: r.revoked_at?.toISOString() ?? null,
});

export interface NewApiKey {
  id: string;
  name: string;
  prefix: string;
  secretHash: string;
  scopes: Scope[];
  rateLimitPerMin: number | null;
  /** Share of each model's queue against other keys at the same priority (1..1000). */
  weight: number;
}

/** Inserts keys; a key whose prefix exists (the bootstrap admin key at each start) is updated and un-revoked. */
export async function insertApiKeys(pool: Pool | PoolClient, keys: NewApiKey[]): Promise<ApiKeyRecord[]> {
  const { rows } = await pool.query<ApiKeyRow>(
    `INSERT INTO api_keys (id, name, prefix, secret_hash, scopes, rate_limit_per_min, weight)
     SELECT k.id, k.name, k.prefix, k.secret_hash, ARRAY(SELECT jsonb_array_elements_text(k.scopes)), k.rate_limit_per_min, k.weight
       FROM jsonb_to_recordset($1::jsonb) AS k(id uuid, name text, prefix text, secret_hash text, scopes jsonb, rate_limit_per_min integer, weight integer)
     ON CONFLICT (prefix) DO UPDATE SET secret_hash = EXCLUDED.secret_hash, scopes = EXCLUDED.scopes,
       rate_limit_per_min = EXCLUDED.rate_limit_per_min, weight = EXCLUDED.weight, revoked_at = NULL
     RETURNING *`,
    [
      JSON.stringify(
        keys.map((k) => ({
          id: k.id,
          name: k.name,
          prefix: k.prefix,
          secret_hash: k.secretHash,
          scopes: k.scopes,
          rate_limit_per_min: k.rateLimitPerMin,
          weight: k.weight,
        })),
      ),
    ],
  );
  return rows.map(toRecord);
}

export async function findApiKeyByPrefix(pool: Pool, prefix: string): Promise<ApiKeyRecord | undefined> {
  const { rows } = await pool.query<ApiKeyRow>('SELECT * FROM api_keys WHERE prefix = $1', [prefix]);
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/** A key's fair-share weight by its id (revoked keys included); undefined when there is no such key. */
export async function findApiKeyWeight(pool: Pool, id: string): Promise<number | undefined> {
  const { rows } = await pool.query<{ weight: number }>('SELECT weight FROM api_keys WHERE id = $1', [id]);
  return rows[0]?.weight;
}

export async function listApiKeys(pool: Pool): Promise<ApiKeyRecord[]> {
  const { rows } = await pool.query<ApiKeyRow>('SELECT * FROM api_keys ORDER BY created_at DESC');
  return rows.map(toRecord);
}

export async function revokeApiKeys(pool: Pool | PoolClient, ids: string[]): Promise<ApiKeyRecord[]> {
  const { rows } = await pool.query<ApiKeyRow>('UPDATE api_keys SET revoked_at = now() WHERE id = ANY($1::uuid[]) AND revoked_at IS NULL RETURNING *', [ids]);
  return rows.map(toRecord);
}

/** A key's settings to change; a field left out stays as it is. */
export interface ApiKeyChanges {
  /** Seconds a finished job of the key is kept; null: the server's default. */
  retentionS?: number | null;
}

/** Changes one key's settings; undefined when there is no such key. */
export async function updateApiKey(pool: Pool | PoolClient, id: string, changes: ApiKeyChanges): Promise<ApiKeyRecord | undefined> {
  const { rows } = await pool.query<ApiKeyRow>(`UPDATE api_keys SET retention_s = CASE WHEN $2 THEN $3::int ELSE retention_s END WHERE id = $1 RETURNING *`, [
    id,
    changes.retentionS !== undefined,
    changes.retentionS ?? null,
  ]);
  return rows[0] ? toRecord(rows[0]) : undefined;
}
