import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { findJobsByIds, insertFile, readBulkBatchLines, type BulkBatchLine, type BulkBatchRecord, type JobRecord, type Pool } from '@inferq/db';
import { fileObjectKey, type Storage } from '@inferq/storage';
import type { BatchEndpointHandler } from './batch-endpoints.ts';

// A batch's answers, written once its jobs are done: one line per request of
// the input file, in its order, in OpenAI's shape — the succeeded ones to the
// output file, the rest to the error file — streamed to object storage a
// chunk of lines at a time (never the whole file in memory). The files' ids
// are the batch's own, so a runner that takes the batch over mid-write writes
// the same objects again.

const LINE_CHUNK = 500;

export interface BatchOutputDeps {
  pool: Pool;
  storage: Pick<Storage, 'putObjectStream' | 'deleteObjects'>;
  /** The batch's endpoint: it makes a succeeded line's response body. */
  handler: Pick<BatchEndpointHandler, 'respond'>;
}

export interface BatchFilesWritten {
  outputFileId: string | null;
  errorFileId: string | null;
  completed: number;
  failed: number;
}

type Ending = 'completed' | 'cancelled' | 'expired';

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

/** One line's answer: for the output file (every job of the line succeeded) or the error file. */
async function answer(line: BulkBatchLine, jobs: ReadonlyArray<JobRecord | undefined>, ending: Ending, deps: BatchOutputDeps) {
  const base = { id: `batch_req_${(jobs[0]?.id ?? String(line.line)).replaceAll('-', '')}`, custom_id: line.customId };
  const requestId = jobs[0]?.id ?? null;
  const done = jobs.length > 0 && jobs.every((j) => j?.status === 'succeeded');
  if (done) {
    try {
      const body = await deps.handler.respond(line.answer, jobs as JobRecord[]);
      return { ok: true, text: JSON.stringify({ ...base, response: { status_code: 200, request_id: requestId, body }, error: null }) };
    } catch (err) {
      const { code = 'INTERNAL', message } = err as { code?: string; message: string };
      return { ok: false, text: JSON.stringify({ ...base, response: problem(500, requestId, code, message), error: null }) };
    }
  }
  // Refused at submit: as the endpoint would have answered it.
  if (line.error)
    return { ok: false, text: JSON.stringify({ ...base, response: problem(line.error.status, null, line.error.code, line.error.message), error: null }) };
  const bad = jobs.find((j) => j?.status === 'failed' || (j?.status === 'expired' && j.errorCode));
  if (bad) {
    const response = problem(500, bad.id, bad.errorCode ?? bad.status, bad.errorMessage ?? `the job ${bad.status}`);
    return { ok: false, text: JSON.stringify({ ...base, response, error: null }) };
  }
  const error = jobs.some((j) => j?.status === 'expired')
    ? { code: 'deadline_exceeded', message: 'A job of the request passed its deadline before it ran.' }
    : NOT_RUN[ending === 'completed' && jobs.some((j) => j?.status === 'canceled') ? 'cancelled' : ending];
  return { ok: false, text: JSON.stringify({ ...base, response: null, error }) };
}

/** A JSONL object being written: lines go in with backpressure, the upload runs beside. */
function jsonlObject(deps: BatchOutputDeps, id: string) {
  const stream = new PassThrough();
  const objectKey = fileObjectKey(id);
  const upload = deps.storage.putObjectStream(objectKey, stream, { contentType: 'application/jsonl' });
  let bytes = 0;
  let lines = 0;
  return {
    id,
    objectKey,
    get lines() {
      return lines;
    },
    get bytes() {
      return bytes;
    },
    async write(text: string): Promise<void> {
      const chunk = `${text}\n`;
      bytes += Buffer.byteLength(chunk);
      lines++;
      if (!stream.write(chunk)) await Promise.race([once(stream, 'drain'), upload]);
    },
    async end(): Promise<void> {
      stream.end();
      await upload;
    },
  };
}

/** Writes the batch's output and error files and records them; a file with no line is not kept. */
export async function writeBatchFiles(deps: BatchOutputDeps, batch: BulkBatchRecord, ending: Ending): Promise<BatchFilesWritten> {
  const hex = batch.id.slice('batch_'.length);
  const output = jsonlObject(deps, `file-${hex}-output`);
  const errors = jsonlObject(deps, `file-${hex}-errors`);
  try {
    for (let after = 0; ;) {
      const lines = await readBulkBatchLines(deps.pool, batch.id, after, LINE_CHUNK);
      if (lines.length === 0) break;
      after = lines.at(-1)!.line;
      const jobs = new Map(
        (
          await findJobsByIds(
            deps.pool,
            lines.flatMap((l) => l.jobIds ?? []),
          )
        ).map((j) => [j.id, j]),
      );
      for (const line of lines) {
        const { ok, text } = await answer(
          line,
          (line.jobIds ?? []).map((id) => jobs.get(id)),
          ending,
          deps,
        );
        await (ok ? output : errors).write(text);
      }
    }
  } finally {
    await Promise.allSettled([output.end(), errors.end()]);
  }
  await Promise.all([output.end(), errors.end()]);
  const kept: Record<'output' | 'errors', string | null> = { output: null, errors: null };
  for (const [name, file] of [
    ['output', output],
    ['errors', errors],
  ] as const) {
    if (file.lines === 0) {
      await deps.storage.deleteObjects([file.objectKey]);
      continue;
    }
    const createdAt = new Date();
    await insertFile(deps.pool, {
      id: file.id,
      ownerKeyId: batch.ownerKeyId,
      purpose: 'batch_output',
      filename: `${batch.id}_${name}.jsonl`,
      bytes: file.bytes,
      objectKey: file.objectKey,
      createdAt,
      expiresAt: batch.outputExpiresAfterS === null ? null : new Date(createdAt.getTime() + batch.outputExpiresAfterS * 1000),
    });
    kept[name] = file.id;
  }
  return { outputFileId: kept.output, errorFileId: kept.errors, completed: output.lines, failed: errors.lines };
}
