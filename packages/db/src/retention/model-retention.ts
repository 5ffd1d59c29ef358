import type { Pool, PoolClient } from '../connection/pool.ts';

export interface ModelRetentionRecord {
  modelName: string;
  /** Seconds a finished job of the model (any version) is kept; null: no override. */
  retentionS: number | null;
  updatedAt: Date | null;
}

/** The override of each name asked for, in their order; names without one come back with null. */
export async function findModelRetentions(pool: Pool | PoolClient, modelNames: readonly string[]): Promise<ModelRetentionRecord[]> {
  if (modelNames.length === 0) return [];
  const { rows } = await pool.query<{ model_name: string; retention_s: number; updated_at: Date }>(
    'SELECT model_name, retention_s, updated_at FROM model_retention WHERE model_name = ANY($1::text[])',
    [modelNames],
  );
  const byName = new Map(rows.map((r) => [r.model_name, r]));
  return modelNames.map((modelName) => {
    const row = byName.get(modelName);
    return { modelName, retentionS: row?.retention_s ?? null, updatedAt: row?.updated_at ?? null };
  });
}

/** One name's override (null without one). */
export async function findModelRetention(pool: Pool | PoolClient, modelName: string): Promise<ModelRetentionRecord> {
  return (await findModelRetentions(pool, [modelName]))[0]!;
}

/** Sets (or with null removes) a model name's retention override. */
export async function setModelRetention(
  pool: Pool | PoolClient,
  modelName: string,
  retentionS: number | null,
  updatedBy: string,
): Promise<ModelRetentionRecord> {
  if (retentionS === null) {
    await pool.query('DELETE FROM model_retention WHERE model_name = $1', [modelName]);
    return { modelName, retentionS: null, updatedAt: null };
  }
  const { rows } = await pool.query<{ retention_s: number; updated_at: Date }>(
    `INSERT INTO model_retention (model_name, retention_s, updated_by) VALUES ($1, $2, $3)
     ON CONFLICT (model_name) DO UPDATE SET retention_s = EXCLUDED.retention_s, updated_by = EXCLUDED.updated_by, updated_at = now()
     RETURNING retention_s, updated_at`,
    [modelName, retentionS, updatedBy],
  );
  return { modelName, retentionS: rows[0]!.retention_s, updatedAt: rows[0]!.updated_at };
}
