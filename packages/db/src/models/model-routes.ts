import type { Pool, PoolClient } from '../connection/pool.ts';

/** One row of a model's routing table: the share of its unversioned traffic one version takes. */
export interface ModelRouteRecord {
  modelName: string;
  version: number;
  weight: number;
  updatedAt: string;
  updatedBy: string | null;
}

interface ModelRouteRow {
  model_name: string;
  version: number;
  weight: number;
  updated_at: Date;
  updated_by: string | null;
}

const toRecord = (r: ModelRouteRow): ModelRouteRecord => ({
  modelName: r.model_name,
  version: r.version,
  weight: r.weight,
  updatedAt: r.updated_at.toISOString(),
  updatedBy: r.updated_by,
});

/** The routing tables of the given models, by name then version (the order weights are laid out in). */
export async function listModelRoutes(pool: Pool | PoolClient, names: string[]): Promise<ModelRouteRecord[]> {
  const { rows } = await pool.query<ModelRouteRow>('SELECT * FROM model_routes WHERE model_name = ANY($1::text[]) ORDER BY model_name, version', [names]);
  return rows.map(toRecord);
}

/** Writes the given rows, replacing the weight of versions already routed. */
export async function upsertModelRoutes(
  client: Pool | PoolClient,
  routes: Array<Pick<ModelRouteRecord, 'modelName' | 'version' | 'weight' | 'updatedBy'>>,
): Promise<void> {
  if (routes.length === 0) return;
  await client.query(
    `INSERT INTO model_routes (model_name, version, weight, updated_by)
     SELECT r.model_name, r.version, r.weight, r.updated_by
       FROM jsonb_to_recordset($1::jsonb) AS r(model_name text, version int, weight int, updated_by uuid)
     ON CONFLICT (model_name, version) DO UPDATE SET weight = EXCLUDED.weight, updated_by = EXCLUDED.updated_by, updated_at = now()`,
    [JSON.stringify(routes.map((r) => ({ model_name: r.modelName, version: r.version, weight: r.weight, updated_by: r.updatedBy })))],
  );
}

/** Removes a model's rows for every version not in `keep`; with `keep` empty, the whole table. */
export async function deleteModelRoutes(client: Pool | PoolClient, name: string, keep: number[]): Promise<void> {
  await client.query('DELETE FROM model_routes WHERE model_name = $1 AND NOT (version = ANY($2::int[]))', [name, keep]);
}
