import {
  findFile,
  insertFile,
  readBulkBatchLines,
  readBulkBatchParts,
  type BulkBatchFile,
  type BulkBatchPart,
  type BulkBatchRecord,
  type Pool,
} from '@inferq/db';
import { fileObjectKey, type Storage } from '@inferq/storage';
import { batchFileId, type BatchAnswers, type Ending } from './batch-answers.ts';

// A batch's output and error files, made when it ends. Its lines were
// answered into parts of each file's multipart upload as they ended
// (batch-answers.ts); what is left is to answer the lines that never ran
// (cancelled, expired), upload what is not in a part as each file's last
// part, and complete the upload: S3 makes the file of its parts where they
// lie, so the finalize copies nothing, whatever the batch's size. A runner
// that takes the finalize over does it again; a file recorded already is
// kept, and an object there already is the upload a runner before completed.

/** Lines read at once when answering the rest. */
const LINE_CHUNK = 500;

export interface BatchOutputDeps {
  pool: Pool;
  storage: Pick<Storage, 'putObject' | 'headObject' | 'uploadPart' | 'completeMultipartUpload'>;
}

export interface BatchFilesWritten {
  outputFileId: string | null;
  errorFileId: string | null;
  completed: number;
  failed: number;
}

/** Makes one file of its parts and the answers in no part yet, and records it; its id and lines (none: no file). */
async function writeFile(
  deps: BatchOutputDeps,
  answers: BatchAnswers,
  batch: BulkBatchRecord,
  file: BulkBatchFile,
  parts: readonly BulkBatchPart[],
): Promise<{ id: string | null; lines: number }> {
  const tail = answers.tail(file);
  const lines = parts.reduce((sum, p) => sum + p.lines, tail.lines);
  if (lines === 0) return { id: null, lines };
  const id = batchFileId(batch, file);
  if (await findFile(deps.pool, id, null)) return { id, lines };
  const objectKey = fileObjectKey(id);
  const uploadId = answers.uploadOf(file);
  let bytes = parts.reduce((sum, p) => sum + p.bytes, tail.bytes);
  // An object there already: a runner before this one completed the upload, then stopped before recording the file.
  const made = await deps.storage.headObject(objectKey);
  if (made) bytes = made.sizeBytes;
  // No upload: every answer of the file is in hand (fewer than a part's worth).
  else if (uploadId === undefined) await deps.storage.putObject(objectKey, tail.body, { contentType: 'application/jsonl' });
  else {
    const all = parts.map((p) => ({ partNumber: p.part, etag: p.etag }));
    if (tail.lines > 0) {
      const last = await answers.claimPart(file);
      all.push({ partNumber: last, etag: await deps.storage.uploadPart(objectKey, uploadId, last, tail.body) });
    }
    await deps.storage.completeMultipartUpload(objectKey, uploadId, all);
  }
  const createdAt = new Date();
  await insertFile(deps.pool, {
    id,
    ownerKeyId: batch.ownerKeyId,
    purpose: 'batch_output',
    filename: `${batch.id}_${file}.jsonl`,
    bytes,
    objectKey,
    createdAt,
    expiresAt: batch.outputExpiresAfterS === null ? null : new Date(createdAt.getTime() + batch.outputExpiresAfterS * 1000),
  });
  return { id, lines };
}

/** Answers the lines not answered yet, and makes and records the batch's output and error files. */
export async function writeBatchFiles(deps: BatchOutputDeps, answers: BatchAnswers, batch: BulkBatchRecord, ending: Ending): Promise<BatchFilesWritten> {
  await answers.settled();
  for (let after = 0; ;) {
    const lines = await readBulkBatchLines(deps.pool, batch.id, after, LINE_CHUNK, true);
    if (lines.length === 0) break;
    after = lines.at(-1)!.line;
    answers.answer(
      lines.filter((l) => !answers.holds(l.line)),
      ending,
    );
    await answers.settled();
  }
  const parts = await readBulkBatchParts(deps.pool, batch.id);
  const write = (file: BulkBatchFile) =>
    writeFile(
      deps,
      answers,
      batch,
      file,
      parts.filter((p) => p.file === file),
    );
  const output = await write('output');
  const errors = await write('errors');
  return { outputFileId: output.id, errorFileId: errors.id, completed: output.lines, failed: errors.lines };
}
