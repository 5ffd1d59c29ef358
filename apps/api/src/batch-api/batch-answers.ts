import {
  claimBulkBatchPart,
  claimBulkBatchUpload,
  findJobsByIds,
  recordBulkBatchPart,
  type BulkBatchFile,
  type BulkBatchLine,
  type BulkBatchRecord,
  type JobRecord,
  type Pool,
} from '@inferq/db';
import { fileObjectKey, type Storage } from '@inferq/storage';
import type { BatchEndpointHandler } from './batch-endpoints.ts';

// A batch's answers, written as its lines end: one line per request in
// OpenAI's shape — the succeeded ones for the output file, the rest for the
// error file. Each file is an S3 multipart upload started at its first part;
// answers gather into a part of PART_BYTES, uploaded under a part number taken
// in the record, and recorded with the lines it answers (a line is answered
// once: a runner that takes the batch over answers only the lines no part
// holds). The finalize (batch-output.ts) uploads the rest as each file's last
// part and completes the upload. Lines go in the order they ended, not the
// file's: OpenAI's output is matched by custom_id too.

/** A part is uploaded once its lines reach this size (S3's least is 5 MiB, but for a file's last part). */
const PART_BYTES = 8 * 2 ** 20;
/** Lines whose jobs are read at once. */
const JOBS_READ_CHUNK = 500;

export type Ending = 'completed' | 'cancelled' | 'expired';

/** A batch's output or error file's id (and its object's name): the batch's own, so a runner that takes over writes the same. */
export const batchFileId = (batch: Pick<BulkBatchRecord, 'id'>, file: BulkBatchFile): string => `file-${batch.id.slice('batch_'.length)}-${file}`;

/** The batch's lease is no longer this runner's (or the process is stopping): it stops, and another runner goes on. */
export class LeaseLost extends Error {}

export interface BatchAnswerDeps {
  pool: Pool;
  storage: Pick<Storage, 'createMultipartUpload' | 'uploadPart' | 'abortMultipartUpload'>;
  /** The batch's endpoint: it makes a succeeded line's response body. */
  handler: Pick<BatchEndpointHandler, 'respond'>;
}

const NOT_RUN: Record<Ending, { code: string; message: string }> = {
  completed: { code: 'not_run', message: 'The request was not run.' },
  cancelled: { code: 'batch_cancelled', message: 'The batch was cancelled before this request ran.' },
  expired: { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' },
};

const problem = (status: number, requestId: string | null, code: string, message: string) => ({
  status_code: status,
  request_id: requestId,
  body: { error: { code, message } },
});

/** One line's answer, and the file it goes to (`output`: every job of the line succeeded). */
async function answer(
  line: BulkBatchLine,
  jobs: ReadonlyArray<JobRecord | undefined>,
  ending: Ending,
  handler: BatchAnswerDeps['handler'],
): Promise<{ file: BulkBatchFile; text: string }> {
  const base = { id: `batch_req_${(jobs[0]?.id ?? String(line.line)).replaceAll('-', '')}`, custom_id: line.customId };
  const requestId = jobs[0]?.id ?? null;
  const failed = (response: unknown, error: unknown = null) => ({ file: 'errors' as const, text: JSON.stringify({ ...base, response, error }) });
  if (jobs.length > 0 && jobs.every((j) => j?.status === 'succeeded')) {
    try {
      const body = await handler.respond(line.answer, jobs as JobRecord[]);
      return { file: 'output', text: JSON.stringify({ ...base, response: { status_code: 200, request_id: requestId, body }, error: null }) };
    } catch (err) {
      const { code = 'INTERNAL', message } = err as { code?: string; message: string };
      return failed(problem(500, requestId, code, message));
    }
  }
  // Refused at submit: as the endpoint would have answered it.
  if (line.error) return failed(problem(line.error.status, null, line.error.code, line.error.message));
  const bad = jobs.find((j) => j?.status === 'failed' || (j?.status === 'expired' && j.errorCode));
  if (bad) return failed(problem(500, bad.id, bad.errorCode ?? bad.status, bad.errorMessage ?? `the job ${bad.status}`));
  const error = jobs.some((j) => j?.status === 'expired')
    ? { code: 'deadline_exceeded', message: 'A job of the request passed its deadline before it ran.' }
    : NOT_RUN[ending === 'completed' && jobs.some((j) => j?.status === 'canceled') ? 'cancelled' : ending];
  return failed(null, error);
}

export interface BatchAnswers {
  /**
   * Queues lines whose jobs have all ended (or whose submit was refused) to be answered, after those queued before,
   * beside the caller's own work (the submits go on meanwhile); a full part is written as it fills. Throws what
   * stopped an earlier answer (LeaseLost, object storage away).
   */
  answer(lines: readonly BulkBatchLine[], ending: Ending): void;
  /** Waits for the answers queued; rejects with what stopped one. */
  settled(): Promise<void>;
  /** Lines queued and not answered yet (the submitter holds back past a window of them). */
  backlog(): number;
  /** Whether the line is answered here but in no part yet. */
  holds(line: number): boolean;
  /** The answers of a file in no part yet (its last part, at the finalize). */
  tail(file: BulkBatchFile): { body: Buffer; lines: number; bytes: number };
  /** The upload a file is written into, if it has one. */
  uploadOf(file: BulkBatchFile): string | undefined;
  /** A part number for the file's last part. */
  claimPart(file: BulkBatchFile): Promise<number>;
  /** Drops the files' uploads (the batch failed: it has no files). */
  abort(): Promise<void>;
}

/** The answers of one batch while `owner` holds its lease; a part it cannot record (the lease gone) throws LeaseLost. */
export function createBatchAnswers(deps: BatchAnswerDeps, batch: BulkBatchRecord, owner: string, partBytes = PART_BYTES): BatchAnswers {
  const pending: Record<BulkBatchFile, { texts: string[]; lines: number[]; bytes: number }> = {
    output: { texts: [], lines: [], bytes: 0 },
    errors: { texts: [], lines: [], bytes: 0 },
  };
  const uploads: Partial<Record<BulkBatchFile, string>> = {
    ...(batch.outputUploadId && { output: batch.outputUploadId }),
    ...(batch.errorsUploadId && { errors: batch.errorsUploadId }),
  };
  const held = new Set<number>();
  const keyOf = (file: BulkBatchFile) => fileObjectKey(batchFileId(batch, file));

  async function claimPart(file: BulkBatchFile): Promise<number> {
    const part = await claimBulkBatchPart(deps.pool, batch.id, owner, file);
    if (part === undefined) throw new LeaseLost('lease lost');
    return part;
  }

  /** The file's upload: the one recorded, or one started now and recorded (one recorded meanwhile wins). */
  async function uploadFor(file: BulkBatchFile): Promise<string> {
    const known = uploads[file];
    if (known) return known;
    const started = await deps.storage.createMultipartUpload(keyOf(file), { contentType: 'application/jsonl' });
    const recorded = await claimBulkBatchUpload(deps.pool, batch.id, owner, file, started);
    if (recorded !== started) await deps.storage.abortMultipartUpload(keyOf(file), started).catch(() => undefined);
    if (recorded === undefined) throw new LeaseLost('lease lost');
    return (uploads[file] = recorded);
  }

  async function writePart(file: BulkBatchFile): Promise<void> {
    const { texts, lines, bytes } = pending[file];
    pending[file] = { texts: [], lines: [], bytes: 0 };
    for (const l of lines) held.delete(l);
    const uploadId = await uploadFor(file);
    const part = await claimPart(file);
    const etag = await deps.storage.uploadPart(keyOf(file), uploadId, part, Buffer.from(texts.join('')));
    if (!(await recordBulkBatchPart(deps.pool, batch.id, owner, { part, file, etag, lines: lines.length, bytes }, lines))) throw new LeaseLost('lease lost');
  }

  async function answerNow(lines: readonly BulkBatchLine[], ending: Ending): Promise<void> {
    for (let i = 0; i < lines.length; i += JOBS_READ_CHUNK) {
      const chunk = lines.slice(i, i + JOBS_READ_CHUNK);
      const jobs = new Map(
        (
          await findJobsByIds(
            deps.pool,
            chunk.flatMap((l) => l.jobIds ?? []),
          )
        ).map((j) => [j.id, j]),
      );
      for (const line of chunk) {
        const { file, text } = await answer(
          line,
          (line.jobIds ?? []).map((id) => jobs.get(id)),
          ending,
          deps.handler,
        );
        queued--;
        const p = pending[file];
        p.texts.push(`${text}\n`);
        p.lines.push(line.line);
        held.add(line.line);
        p.bytes += Buffer.byteLength(text) + 1;
        if (p.bytes >= partBytes) await writePart(file);
      }
    }
  }

  let queue: Promise<void> = Promise.resolve();
  let queued = 0;
  let failure: unknown;
  const settled = async () => {
    await queue;
    if (failure !== undefined) throw failure;
  };
  return {
    answer(lines, ending) {
      if (failure !== undefined) throw failure;
      if (lines.length === 0) return;
      queued += lines.length;
      queue = queue.then(() => (failure === undefined ? answerNow(lines, ending) : undefined)).catch((err: unknown) => void (failure ??= err));
    },
    settled,
    backlog: () => queued,
    holds: (line) => held.has(line),
    tail: (file) => ({ body: Buffer.from(pending[file].texts.join('')), lines: pending[file].lines.length, bytes: pending[file].bytes }),
    uploadOf: (file) => uploads[file],
    claimPart,
    async abort() {
      // Best effort (an S3 that keeps an aborted upload, or has no abort, costs its parts' bytes until its own cleanup).
      for (const [file, uploadId] of Object.entries(uploads) as Array<[BulkBatchFile, string]>)
        await deps.storage.abortMultipartUpload(keyOf(file), uploadId).catch(() => undefined);
    },
  };
}
