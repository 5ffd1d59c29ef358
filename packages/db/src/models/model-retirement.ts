import type { Pool, PoolClient } from '../connection/pool.ts';
import { liveJobIds } from '../retention/job-floors.ts';
import { idRangeSql } from '../sql/job-id-range.ts';

// Retired model versions against the jobs that still need them: a retired
// version's artifact stays while any of its jobs is queued or running.

const UNFINISHED = "j.status IN ('queued', 'running')";

/** Jobs still queued or running per version of a model (versions without any are left out). */
export async function countUnfinishedJobsByVersion(pool: Pool | PoolClient, name: string, versions: number[]): Promise<Map<number, number>> {
  const { rows } = await pool.query<{ version: number; n: number }>(
    `SELECT j.model_version AS version, count(*)::int AS n FROM jobs j
      WHERE j.model_name = $1 AND j.model_version = ANY($2::int[]) AND ${UNFINISHED} GROUP BY 1`,
    [name, versions],
  );
  return new Map(rows.map((r) => [r.version, r.n]));
}

/** Names with retired versions whose artifacts are still kept, retired at least `graceMs` ago. */
export async function listModelsWithRetiredArtifacts(pool: Pool, graceMs: number): Promise<string[]> {
  const { rows } = await pool.query<{ name: string }>(
    `SELECT DISTINCT name FROM models
      WHERE retired_at IS NOT NULL AND artifact_deleted_at IS NULL AND retired_at <= now() - $1 * interval '1 millisecond'
      ORDER BY name`,
    [graceMs],
  );
  return rows.map((r) => r.name);
}

/**
 * Marks the artifacts of a model's retired versions deleted when no job of
 * theirs is queued or running and they were retired at least `graceMs` ago,
 * and returns those versions and the object keys (artifacts, tokenizers) that
 * no version still keeping its artifact shares. The caller holds the name's
 * lock (lockModelName) and deletes the objects before it commits.
 */
export async function claimRetiredArtifacts(client: PoolClient, name: string, graceMs: number): Promise<{ versions: number[]; keys: string[] }> {
  const { rows } = await client.query<{ version: number; artifact_key: string; tokenizer_key: string | null }>(
    `UPDATE models m SET artifact_deleted_at = now()
      WHERE m.name = $1 AND m.retired_at IS NOT NULL AND m.artifact_deleted_at IS NULL
        AND m.retired_at <= now() - $2 * interval '1 millisecond'
        AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.model_name = m.name AND j.model_version = m.version AND ${UNFINISHED})
      RETURNING m.version, m.artifact_key, m.tokenizer_key`,
    [name, graceMs],
  );
  const candidates = [...new Set(rows.flatMap((r) => (r.tokenizer_key ? [r.artifact_key, r.tokenizer_key] : [r.artifact_key])))];
  if (candidates.length === 0) return { versions: rows.map((r) => r.version), keys: [] };
  // The same bytes uploaded again share a key: it stays while any version still keeps its artifact.
  const { rows: kept } = await client.query<{ key: string }>(
    `SELECT artifact_key AS key FROM models WHERE artifact_deleted_at IS NULL AND artifact_key = ANY($1::text[])
     UNION SELECT tokenizer_key FROM models WHERE artifact_deleted_at IS NULL AND tokenizer_key = ANY($1::text[])`,
    [candidates],
  );
  const keep = new Set(kept.map((r) => r.key));
  return { versions: rows.map((r) => r.version).sort((a, b) => a - b), keys: candidates.filter((k) => !keep.has(k)) };
}

/** Of the given loaded versions, the retired ones with no job queued or running: nothing will run on them again. */
export async function findIdleRetiredVersions(
  pool: Pool,
  loaded: ReadonlyArray<{ model: string; version: number }>,
): Promise<Array<{ model: string; version: number }>> {
  if (loaded.length === 0) return [];
  const { rows } = await pool.query<{ model: string; version: number }>(
    `SELECT m.name AS model, m.version FROM models m
       JOIN unnest($1::text[], $2::int[]) AS l(name, version) ON m.name = l.name AND m.version = l.version
      WHERE m.retired_at IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM jobs j WHERE ${idRangeSql(await liveJobIds(pool), 'j.id')} AND j.model_name = m.name AND j.model_version = m.version
                                                AND ${UNFINISHED})`,
    [loaded.map((l) => l.model), loaded.map((l) => l.version)],
  );
  return rows;
}
