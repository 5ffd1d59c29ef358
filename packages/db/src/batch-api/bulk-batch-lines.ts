import type { Pool } from '../connection/pool.ts';

// A Batch API batch's lines (bulk_batch_requests): written as its file is
// validated, given their jobs as they are submitted, and answered as those
// jobs end — each answer into a part of the batch's output or error file
// (bulk_batch_parts, migration 0027) that the finalize joins.

/** A batch's lines as validated, a chunk at a time (file line numbers and their custom_ids). False when a custom_id repeats one already written. */
export async function insertBulkBatchLines(pool: Pool, batchId: string, lines: readonly number[], customIds: readonly string[]): Promise<boolean> {
  try {
    await pool.query(`INSERT INTO bulk_batch_requests (batch_id, line, custom_id) SELECT $1, l, c FROM unnest($2::int[], $3::text[]) AS u(l, c)`, [
      batchId,
      lines,
      customIds,
    ]);
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === '23505') return false;
    throw err;
  }
}

/** Forgets a batch's lines (its validation starts again under a new lease). */
export async function deleteBulkBatchLines(pool: Pool, batchId: string): Promise<void> {
  await pool.query('DELETE FROM bulk_batch_requests WHERE batch_id = $1', [batchId]);
}

/** Why a line's submit was refused: as the endpoint would have answered it. */
export interface BulkLineError {
  code: string;
  message: string;
  status: number;
}

/** What became of one submitted line: its jobs (one, or one a text) and what answering it takes, or why its submit was refused. */
export interface BulkLineOutcome {
  line: number;
  jobIds: string[] | null;
  answer: unknown;
  error: BulkLineError | null;
}

/** Records the outcomes of a chunk of lines and moves `submitted` (the last line submitted) to `submitted`, in one statement. */
export async function recordBulkBatchSubmits(pool: Pool, batchId: string, outcomes: readonly BulkLineOutcome[], submitted: number): Promise<void> {
  await pool.query(
    `WITH o AS (SELECT * FROM jsonb_to_recordset($2::jsonb) AS o(line int, "jobIds" uuid[], answer jsonb, error jsonb)),
          lines AS (UPDATE bulk_batch_requests r SET job_ids = o."jobIds", answer = o.answer, error = o.error FROM o WHERE r.batch_id = $1 AND r.line = o.line)
     UPDATE bulk_batches SET submitted = GREATEST(submitted, $3) WHERE id = $1`,
    [batchId, JSON.stringify(outcomes.map((o) => ({ ...o, jobIds: o.jobIds && `{${o.jobIds.join(',')}}` }))), submitted],
  );
}

/** The two files a batch answers into. */
export type BulkBatchFile = 'output' | 'errors';

export interface BulkBatchLine extends BulkLineOutcome {
  customId: string;
  /** The file whose part holds the line's answer; null: not answered yet. */
  written: BulkBatchFile | null;
}

/** Up to `limit` of a batch's lines after `afterLine`, in line order; `unanswered`: only those no part holds yet. */
export async function readBulkBatchLines(pool: Pool, batchId: string, afterLine: number, limit: number, unanswered = false): Promise<BulkBatchLine[]> {
  const { rows } = await pool.query<{
    line: number;
    custom_id: string;
    job_ids: string[] | null;
    answer: unknown;
    error: BulkLineError | null;
    written: BulkBatchFile | null;
  }>(
    `SELECT r.line, r.custom_id, r.job_ids::text[], r.answer, r.error, p.file AS written
       FROM bulk_batch_requests r LEFT JOIN bulk_batch_parts p ON p.batch_id = r.batch_id AND p.part = r.part
      WHERE r.batch_id = $1 AND r.line > $2 AND (NOT $4 OR r.part IS NULL) ORDER BY r.line LIMIT $3`,
    [batchId, afterLine, limit, unanswered],
  );
  return rows.map((r) => ({ line: r.line, customId: r.custom_id, jobIds: r.job_ids, answer: r.answer, error: r.error, written: r.written }));
}

/** One part of a batch's output or error file: an object of answer lines, in the order the lines ended. */
export interface BulkBatchPart {
  part: number;
  file: BulkBatchFile;
  objectKey: string;
  lines: number;
  bytes: number;
}

/** A batch's parts, in the order they were written. */
export async function readBulkBatchParts(pool: Pool, batchId: string): Promise<BulkBatchPart[]> {
  const { rows } = await pool.query<{ part: number; file: BulkBatchFile; object_key: string; lines: number; bytes: string }>(
    'SELECT part, file, object_key, lines, bytes FROM bulk_batch_parts WHERE batch_id = $1 ORDER BY part',
    [batchId],
  );
  return rows.map((r) => ({ part: r.part, file: r.file, objectKey: r.object_key, lines: r.lines, bytes: Number(r.bytes) }));
}

/**
 * Records a part whose object is written, and marks its lines answered, in one statement — if `owner` still holds the
 * batch's lease (the batch row locked, so a takeover in flight is seen): false when it does not, and nothing is recorded.
 * A line another part already holds keeps it.
 */
export async function recordBulkBatchPart(pool: Pool, batchId: string, owner: string, part: BulkBatchPart, lines: readonly number[]): Promise<boolean> {
  const { rows } = await pool.query(
    `WITH held AS (SELECT id FROM bulk_batches WHERE id = $1 AND lease_owner = $2 FOR UPDATE),
          p AS (INSERT INTO bulk_batch_parts (batch_id, part, file, object_key, lines, bytes) SELECT id, $3, $4, $5, $6, $7 FROM held RETURNING part),
          l AS (UPDATE bulk_batch_requests SET part = p.part FROM p WHERE batch_id = $1 AND line = ANY($8::int[]) AND bulk_batch_requests.part IS NULL)
     SELECT part FROM p`,
    [batchId, owner, part.part, part.file, part.objectKey, part.lines, part.bytes, lines],
  );
  return rows.length > 0;
}
