import type { BatchingMode, EmbeddingSettings, Model, TensorSpec } from '@inferq/contracts';
import type { Pool, PoolClient } from '../connection/pool.ts';

export interface ModelRecord extends Model {
  id: string;
  artifactKey: string;
  /** The tokenizer.json of an embedding model. */
  tokenizerKey: string | null;
}

interface ModelRow {
  id: string;
  name: string;
  version: number;
  artifact_key: string;
  sha256: string;
  size_bytes: number;
  inputs: TensorSpec[];
  outputs: TensorSpec[];
  batchable: boolean;
  max_batch_size: number;
  max_batch_delay_ms: number;
  batching_mode: BatchingMode;
  latency_target_ms: number | null;
  response_cache: boolean;
  tokenizer_key: string | null;
  embedding: EmbeddingSettings | null;
  created_at: Date;
  retired_at: Date | null;
}

const toRecord = (r: ModelRow): ModelRecord => ({
  id: r.id,
  name: r.name,
  version: r.version,
  artifactKey: r.artifact_key,
  tokenizerKey: r.tokenizer_key,
  sha256: r.sha256,
  sizeBytes: r.size_bytes,
  signature: { inputs: r.inputs, outputs: r.outputs, batchable: r.batchable },
  batching: { maxBatchSize: r.max_batch_size, maxBatchDelayMs: r.max_batch_delay_ms, mode: r.batching_mode, latencyTargetMs: r.latency_target_ms },
  responseCache: r.response_cache,
  embedding: r.embedding ?? undefined,
  createdAt: r.created_at.toISOString(),
  ...(r.retired_at ? { retiredAt: r.retired_at.toISOString() } : {}),
});

export type NewModel = Omit<ModelRecord, 'version' | 'createdAt' | 'retiredAt'> & { createdBy: string | null };

/**
 * What a name alone means: the newest version that is not retired, or, once
 * every version is, the newest one (whose `retiredAt` then says so).
 */
const LATEST_ORDER = '(retired_at IS NULL) DESC, version DESC';

/**
 * Inserts the next version of a model. The version is computed in the same
 * statement; the unique (name, version) index makes a concurrent upload of
 * the same name fail rather than share a number, so callers retry once.
 */
export async function insertModelVersion(pool: Pool | PoolClient, m: NewModel): Promise<ModelRecord> {
  for (let attempt = 0; ; attempt++) {
    const {
      rows: [next],
    } = await pool.query<{ v: number }>('SELECT COALESCE(MAX(version), 0) + 1 AS v FROM models WHERE name = $1', [m.name]);
    const version = next!.v;
    try {
      const { rows } = await pool.query<ModelRow>(
        `INSERT INTO models (id, name, version, artifact_key, sha256, size_bytes, inputs, outputs, batchable, max_batch_size,
                             max_batch_delay_ms, batching_mode, latency_target_ms, response_cache, tokenizer_key, embedding, created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) RETURNING *`,
        [
          m.id,
          m.name,
          version,
          m.artifactKey,
          m.sha256,
          m.sizeBytes,
          JSON.stringify(m.signature.inputs),
          JSON.stringify(m.signature.outputs),
          m.signature.batchable,
          m.batching.maxBatchSize,
          m.batching.maxBatchDelayMs,
          m.batching.mode,
          m.batching.latencyTargetMs,
          m.responseCache,
          m.tokenizerKey,
          m.embedding ? JSON.stringify(m.embedding) : null,
          m.createdBy,
        ],
      );
      return toRecord(rows[0]!);
    } catch (err) {
      if ((err as { code?: string }).code !== '23505' || attempt >= 3) throw err;
    }
  }
}

/** The given version (retired or not), or the latest one (see LATEST_ORDER) when version is undefined. */
export async function findModel(pool: Pool, name: string, version?: number): Promise<ModelRecord | undefined> {
  const { rows } =
    version === undefined
      ? await pool.query<ModelRow>(`SELECT * FROM models WHERE name = $1 ORDER BY ${LATEST_ORDER} LIMIT 1`, [name])
      : await pool.query<ModelRow>('SELECT * FROM models WHERE name = $1 AND version = $2', [name, version]);
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/** The latest version of every model (see LATEST_ORDER): a model whose versions are all retired is listed too. */
export async function listLatestModels(pool: Pool): Promise<ModelRecord[]> {
  const { rows } = await pool.query<ModelRow>(`SELECT DISTINCT ON (name) * FROM models ORDER BY name, ${LATEST_ORDER}`);
  return rows.map(toRecord);
}

export async function listModelVersions(pool: Pool | PoolClient, name: string): Promise<ModelRecord[]> {
  const { rows } = await pool.query<ModelRow>('SELECT * FROM models WHERE name = $1 ORDER BY version DESC', [name]);
  return rows.map(toRecord);
}

/**
 * Retires the given versions of a model (all of them when `versions` is
 * undefined); versions already retired keep their first retirement. Returns
 * the rows it retired now.
 */
export async function retireModelVersions(
  client: Pool | PoolClient,
  name: string,
  versions: number[] | undefined,
  retiredBy: string | null,
): Promise<ModelRecord[]> {
  const { rows } = await client.query<ModelRow>(
    `UPDATE models SET retired_at = now(), retired_by = $3
      WHERE name = $1 AND ($2::int[] IS NULL OR version = ANY($2::int[])) AND retired_at IS NULL
      RETURNING *`,
    [name, versions ?? null, retiredBy],
  );
  return rows.map(toRecord).sort((a, b) => b.version - a.version);
}

/**
 * Serialises the writers of one model name until the transaction ends:
 * registration (its artifact upload and row) against the sweep of retired
 * artifacts, which share S3 keys when the same bytes are uploaded again, and
 * retirement against routing changes.
 */
export async function lockModelName(client: PoolClient, name: string): Promise<void> {
  await client.query("SELECT pg_advisory_xact_lock(hashtext('inferq:model:' || $1))", [name]);
}
