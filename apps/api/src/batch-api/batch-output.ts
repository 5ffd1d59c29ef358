import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { findJobsByIds, insertFile, readBulkBatchLines, type BulkBatchLine, type BulkBatchRecord, type JobRecord, type Pool } from '@inferq/db';
import { fileObjectKey, type Storage, type TensorStore } from '@inferq/storage';
import { toJobDetail } from '../services/job-view.ts';

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
  tensors: Pick<TensorStore, 'locateTensor'>;
  outputUrlTtlS: number;
}

export interface BatchFilesWritten {
  outputFileId: string | null;
  errorFileId: string | null;
  completed: number;
  failed: number;
}

type Ending = 'completed' | 'cancelled' | 'expired';

const requestId = (line: BulkBatchLine, job: JobRecord | undefined): string => `batch_req_${(job?.id ?? `${line.line}`).replaceAll('-', '')}`;

const NOT_RUN: Record<Ending, { code: string; message: string }> = {
  completed: { code: 'not_run', message: 'The request was not run.' },
  cancelled: { code: 'batch_cancelled', message: 'The batch was cancelled before this request ran.' },
  expired: { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' },
};

/** One line's answer: for the output file (a job that succeeded) or the error file. */
async function answer(line: BulkBatchLine, job: JobRecord | undefined, ending: Ending, deps: BatchOutputDeps): Promise<{ ok: boolean; text: string }> {
  const base = { id: requestId(line, job), custom_id: line.customId };
  let value: object;
  if (job?.status === 'succeeded') {
    const body = await toJobDetail(job, deps.tensors, deps.outputUrlTtlS, 'json');
    return { ok: true, text: JSON.stringify({ ...base, response: { status_code: 200, request_id: job.id, body }, error: null }) };
  }
  if (line.error) {
    // Refused at submit, as the endpoint would have answered it.
    value = {
      ...base,
      response: { status_code: line.error.status, request_id: null, body: { error: { code: line.error.code, message: line.error.message } } },
      error: null,
    };
  } else if (job && (job.status === 'failed' || (job.status === 'expired' && job.errorCode))) {
    const error = { code: job.errorCode ?? job.status, message: job.errorMessage ?? `the job ${job.status}` };
    value = { ...base, response: { status_code: 500, request_id: job.id, body: { error } }, error: null };
  } else if (job?.status === 'expired') {
    value = { ...base, response: null, error: { code: 'deadline_exceeded', message: 'The job passed its deadline before it ran.' } };
  } else {
    value = { ...base, response: null, error: NOT_RUN[job?.status === 'canceled' && ending === 'completed' ? 'cancelled' : ending] };
  }
  return { ok: false, text: JSON.stringify(value) };
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
            lines.flatMap((l) => (l.jobId ? [l.jobId] : [])),
          )
        ).map((j) => [j.id, j]),
      );
      for (const line of lines) {
        const { ok, text } = await answer(line, line.jobId ? jobs.get(line.jobId) : undefined, ending, deps);
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
    await insertFile(deps.pool, {
      id: file.id,
      ownerKeyId: batch.ownerKeyId,
      purpose: 'batch_output',
      filename: `${batch.id}_${name}.jsonl`,
      bytes: file.bytes,
      objectKey: file.objectKey,
      createdAt: new Date(),
    });
    kept[name] = file.id;
  }
  return { outputFileId: kept.output, errorFileId: kept.errors, completed: output.lines, failed: errors.lines };
}
