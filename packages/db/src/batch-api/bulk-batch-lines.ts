import type { Pool } from '../connection/pool.ts';

// A Batch API batch's lines (bulk_batch_requests): written as its file is
// validated, given their jobs as they are submitted, and answered as those
// jobs end — each answer into a part of the batch's output or error file, a
// multipart upload that gets its parts as the batch runs (bulk_batch_parts,
// migration 0027).

/**
 * A chunk of a batch's lines as validated (file line numbers and their custom_ids), and `total`, the requests validated
 * so far. A line recorded already is left as it is (a runner that took the batch over validates from the start).
 * False when a custom_id repeats one another line has.
 */
export async function insertBulkBatchLines(
  pool: Pool,
  batchId: string,
  lines: readonly number[],
  customIds: readonly string[],
  total: number,
): Promise<boolean> {
  try {
    await pool.query(
      `WITH l AS (INSERT INTO bulk_batch_requests (batch_id, line, custom_id) SELECT $1, l, c FROM unnest($2::int[], $3::text[]) AS u(l, c)
                  ON CONFLICT (batch_id, line) DO NOTHING)
       UPDATE bulk_batches SET total = GREATEST(total, $4) WHERE id = $1`,
      [batchId, lines, customIds, total],
    );
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === '23505') return false;
    throw err;
  }
}

/** Forgets a batch's lines and the parts of its answers (its file was refused). */
export async function deleteBulkBatchLines(pool: Pool, batchId: string): Promise<void> {
  await pool.query('WITH p AS (DELETE FROM bulk_batch_parts WHERE batch_id = $1) DELETE FROM bulk_batch_requests WHERE batch_id = $1', [batchId]);
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

/** One part of a batch's output or error file: a part of the file's multipart upload, answer lines in the order they ended. */
export interface BulkBatchPart {
  part: number;
  file: BulkBatchFile;
  etag: string;
  lines: number;
  bytes: number;
}

/** A batch's parts uploaded and recorded, in number order. */
export async function readBulkBatchParts(pool: Pool, batchId: string): Promise<BulkBatchPart[]> {
  const { rows } = await pool.query<{ part: number; file: BulkBatchFile; etag: string; lines: number; bytes: string }>(
    'SELECT part, file, etag, lines, bytes FROM bulk_batch_parts WHERE batch_id = $1 AND etag IS NOT NULL ORDER BY part',
    [batchId],
  );
  return rows.map((r) => ({ part: r.part, file: r.file, etag: r.etag, lines: r.lines, bytes: Number(r.bytes) }));
}

/**
 * The next part number of a batch's files, taken for `file` while `owner` holds the lease (the batch row locked, so a
 * takeover in flight is seen); undefined when it does not. A number is taken once: a runner that lost the lease can
 * upload only under a number its successor never uses.
 */
export async function claimBulkBatchPart(pool: Pool, batchId: string, owner: string, file: BulkBatchFile): Promise<number | undefined> {
  const { rows } = await pool.query<{ part: number }>(
    `WITH held AS (SELECT id FROM bulk_batches WHERE id = $1 AND lease_owner = $2 FOR UPDATE)
     INSERT INTO bulk_batch_parts (batch_id, part, file, lines, bytes)
     SELECT id, coalesce((SELECT max(part) FROM bulk_batch_parts WHERE batch_id = $1), 0) + 1, $3, 0, 0 FROM held RETURNING part`,
    [batchId, owner, file],
  );
  return rows[0]?.part;
}

/**
 * Records a part uploaded (its ETag) and marks its lines answered, in one statement, if `owner` still holds the lease:
 * false when it does not, and nothing is recorded. A line another part already holds keeps it.
 */
export async function recordBulkBatchPart(pool: Pool, batchId: string, owner: string, part: BulkBatchPart, lines: readonly number[]): Promise<boolean> {
  const { rows } = await pool.query(
    `WITH held AS (SELECT id FROM bulk_batches WHERE id = $1 AND lease_owner = $2 FOR UPDATE),
          p AS (UPDATE bulk_batch_parts SET etag = $4, lines = $5, bytes = $6 FROM held WHERE batch_id = held.id AND part = $3 RETURNING part),
          l AS (UPDATE bulk_batch_requests SET part = p.part FROM p WHERE batch_id = $1 AND line = ANY($7::int[]) AND bulk_batch_requests.part IS NULL)
     SELECT part FROM p`,
    [batchId, owner, part.part, part.etag, part.lines, part.bytes, lines],
  );
  return rows.length > 0;
}

/**
 * The multipart upload a batch's file is written into: `uploadId` recorded if the file has none yet and `owner` holds
 * the lease. The one recorded after it (`uploadId`, or one recorded before); undefined when the lease is not the owner's.
 */
export async function claimBulkBatchUpload(pool: Pool, batchId: string, owner: string, file: BulkBatchFile, uploadId: string): Promise<string | undefined> {
  const column = file === 'output' ? 'output_upload_id' : 'errors_upload_id';
  const { rows } = await pool.query<{ upload_id: string }>(
    `UPDATE bulk_batches SET ${column} = coalesce(${column}, $3) WHERE id = $1 AND lease_owner = $2 RETURNING ${column} AS upload_id`,
    [batchId, owner, uploadId],
  );
  return rows[0]?.upload_id;
}
