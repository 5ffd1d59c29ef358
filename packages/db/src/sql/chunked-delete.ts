import type { Pool } from '../connection/pool.ts';

export interface ChunkedDeleteOptions {
  /** Rows per DELETE statement (each its own transaction, so no pass holds its locks long). @default 10_000 */
  chunkRows?: number;
  /** Statements per call at most; the rest waits for the next call. @default 100 */
  maxChunks?: number;
}

/** The time each table's rows age by (lost_jobs: when the record lost the job). */
const TIME_COLUMN = { batches: 'created_at', audit_log: 'created_at', lost_jobs: 'lost_at' } as const;

/**
 * Deletes the rows of `table` whose `created_at` (`lost_at`) lies before `before`, oldest
 * first, `chunkRows` at a time through the table's index on that time (each
 * chunk an index range scan from the oldest row, then deletes by primary key
 * `id`), stopping after a short chunk or `maxChunks` of them. Returns the rows
 * deleted. `table` is one of this package's names, never user input.
 */
export async function deleteCreatedBefore(pool: Pool, table: keyof typeof TIME_COLUMN, before: Date, options: ChunkedDeleteOptions = {}): Promise<number> {
  const at = TIME_COLUMN[table];
  const chunkRows = options.chunkRows ?? 10_000;
  const maxChunks = options.maxChunks ?? 100;
  let deleted = 0;
  for (let n = 0; n < maxChunks; n++) {
    const { rowCount } = await pool.query(`DELETE FROM ${table} WHERE id IN (SELECT id FROM ${table} WHERE ${at} < $1 ORDER BY ${at} LIMIT $2)`, [
      before,
      chunkRows,
    ]);
    deleted += rowCount ?? 0;
    if ((rowCount ?? 0) < chunkRows) break;
  }
  return deleted;
}
