import type { Pool, PoolClient } from '../connection/pool.ts';

/**
 * The record of an operator's pause of a model's queue (migration 0023).
 * BullMQ's flag in Redis is what workers obey; this is what it is put back
 * from when Redis loses it.
 */

/** Records the model's queue as paused or not; answers the state recorded before (undefined: none was). */
export async function recordModelQueuePause(pool: Pool | PoolClient, modelName: string, paused: boolean): Promise<boolean | undefined> {
  // The row as it was, read in the same statement that writes it: of two concurrent writers each sees the other's.
  const { rows } = await pool.query<{ before: boolean | null }>(
    `WITH before AS (SELECT paused FROM model_queue_pauses WHERE model_name = $1 FOR UPDATE)
     INSERT INTO model_queue_pauses (model_name, paused) VALUES ($1, $2)
     ON CONFLICT (model_name) DO UPDATE SET paused = EXCLUDED.paused,
       changed_at = CASE WHEN model_queue_pauses.paused = EXCLUDED.paused THEN model_queue_pauses.changed_at ELSE now() END
     RETURNING (SELECT paused FROM before) AS before`,
    [modelName, paused],
  );
  return rows[0]?.before ?? undefined;
}

/** Every recorded state, by model name. */
export async function listModelQueuePauses(pool: Pool | PoolClient): Promise<Map<string, boolean>> {
  const { rows } = await pool.query<{ model_name: string; paused: boolean }>('SELECT model_name, paused FROM model_queue_pauses');
  return new Map(rows.map((r) => [r.model_name, r.paused]));
}
