import { randomBytes } from 'node:crypto';
import {
  findJobsByIds,
  readBulkBatchParts,
  recordBulkBatchPart,
  type BulkBatchFile,
  type BulkBatchLine,
  type BulkBatchRecord,
  type JobRecord,
  type Pool,
} from '@inferq/db';
import { batchPartsPrefix, type Storage } from '@inferq/storage';
import type { BatchEndpointHandler } from './batch-endpoints.ts';

// A batch's answers, written as its lines end: one line per request in
// OpenAI's shape — the succeeded ones for the output file, the rest for the
// error file — gathered into parts of PART_BYTES, each one object under
// files/<batch>.parts/, recorded with the lines it answers (a line is answered
// once: a runner that takes the batch over answers only the lines no part
// holds). The finalize (batch-output.ts) joins each file's parts. Lines go
// in the order they ended, not the file's: OpenAI's output is matched by
// custom_id too.

/** A part is written once its lines reach this size (a few parts for a 100,000-line batch). */
const PART_BYTES = 4 * 2 ** 20;
/** Lines whose jobs are read at once. */
const JOBS_READ_CHUNK = 500;

export type Ending = 'completed' | 'cancelled' | 'expired';

/** The batch's lease is no longer this runner's (or the process is stopping): it stops, and another runner goes on. */
export class LeaseLost extends Error {}

export interface BatchAnswerDeps {
  pool: Pool;
  storage: Pick<Storage, 'putObject'>;
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
  /** Answers lines whose jobs have all ended (or whose submit was refused); a full part is written as it fills. */
  answer(lines: readonly BulkBatchLine[], ending: Ending): Promise<void>;
  /** Writes the answers not yet in a part. */
  flush(): Promise<void>;
}

/** The answers of one batch while `owner` holds its lease; a part it cannot record (the lease gone) throws LeaseLost. */
export function createBatchAnswers(deps: BatchAnswerDeps, batch: BulkBatchRecord, owner: string, partBytes = PART_BYTES): BatchAnswers {
  const pending: Record<BulkBatchFile, { texts: string[]; lines: number[]; bytes: number }> = {
    output: { texts: [], lines: [], bytes: 0 },
    errors: { texts: [], lines: [], bytes: 0 },
  };
  let next: number | undefined;

  async function writePart(file: BulkBatchFile): Promise<void> {
    const { texts, lines, bytes } = pending[file];
    if (lines.length === 0) return;
    pending[file] = { texts: [], lines: [], bytes: 0 };
    next ??= ((await readBulkBatchParts(deps.pool, batch.id)).at(-1)?.part ?? 0) + 1;
    const part = next++;
    // Its own name: a runner that lost the lease unknowingly never overwrites the part its successor recorded.
    const objectKey = `${batchPartsPrefix(batch.id)}${String(part).padStart(6, '0')}-${randomBytes(4).toString('hex')}.jsonl`;
    await deps.storage.putObject(objectKey, Buffer.from(texts.join('')), { contentType: 'application/jsonl' });
    if (!(await recordBulkBatchPart(deps.pool, batch.id, owner, { part, file, objectKey, lines: lines.length, bytes }, lines)))
      throw new LeaseLost('lease lost');
  }

  return {
    async answer(lines, ending) {
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
          const p = pending[file];
          p.texts.push(`${text}\n`);
          p.lines.push(line.line);
          p.bytes += Buffer.byteLength(text) + 1;
          if (p.bytes >= partBytes) await writePart(file);
        }
      }
    },
    async flush() {
      await writePart('output');
      await writePart('errors');
    },
  };
}
