import { Readable } from 'node:stream';
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
import { batchPartsPrefix, fileObjectKey, type Storage } from '@inferq/storage';
import type { BatchAnswers, Ending } from './batch-answers.ts';

// A batch's output and error files, made when it ends. Its lines were
// answered into parts as they ended (batch-answers.ts); what is left is to
// answer the lines that never ran (cancelled, expired), then join each
// file's parts into the file's one object — a copy of bytes, no job read —
// and record the file. The files' ids are the batch's own, so a runner that
// takes the finalize over writes the same objects again; one whose file is
// recorded already skips it (every line had its part before any file was).

/** Lines read at once when answering the rest. */
const LINE_CHUNK = 500;

export interface BatchOutputDeps {
  pool: Pool;
  storage: Pick<Storage, 'getObjectStream' | 'putObjectStream' | 'listObjects' | 'deleteObjects'>;
}

export interface BatchFilesWritten {
  outputFileId: string | null;
  errorFileId: string | null;
  completed: number;
  failed: number;
}

/** The parts' objects one after another, as one stream (each part opened when the one before has been read). */
function joined(storage: BatchOutputDeps['storage'], parts: readonly BulkBatchPart[]): Readable {
  return Readable.from(
    (async function* () {
      for (const part of parts) yield* await storage.getObjectStream(part.objectKey);
    })(),
  );
}

/** Writes one file from its parts (none: no file) and records it; its id. */
async function writeFile(deps: BatchOutputDeps, batch: BulkBatchRecord, file: BulkBatchFile, parts: readonly BulkBatchPart[]): Promise<string | null> {
  if (parts.length === 0) return null;
  const id = `file-${batch.id.slice('batch_'.length)}-${file}`;
  if (await findFile(deps.pool, id, null)) return id;
  const objectKey = fileObjectKey(id);
  await deps.storage.putObjectStream(objectKey, joined(deps.storage, parts), { contentType: 'application/jsonl' });
  const createdAt = new Date();
  await insertFile(deps.pool, {
    id,
    ownerKeyId: batch.ownerKeyId,
    purpose: 'batch_output',
    filename: `${batch.id}_${file}.jsonl`,
    bytes: parts.reduce((sum, p) => sum + p.bytes, 0),
    objectKey,
    createdAt,
    expiresAt: batch.outputExpiresAfterS === null ? null : new Date(createdAt.getTime() + batch.outputExpiresAfterS * 1000),
  });
  return id;
}

/** Answers the lines no part holds yet, writes the batch's output and error files from its parts, and deletes the parts. */
export async function writeBatchFiles(deps: BatchOutputDeps, answers: BatchAnswers, batch: BulkBatchRecord, ending: Ending): Promise<BatchFilesWritten> {
  // The answers in hand first: their lines are then no longer unanswered.
  await answers.flush();
  for (let after = 0; ;) {
    const lines = await readBulkBatchLines(deps.pool, batch.id, after, LINE_CHUNK, true);
    if (lines.length === 0) break;
    after = lines.at(-1)!.line;
    await answers.answer(lines, ending);
  }
  await answers.flush();
  const parts = await readBulkBatchParts(deps.pool, batch.id);
  const of = (file: BulkBatchFile) => parts.filter((p) => p.file === file);
  const lines = (file: BulkBatchFile) => of(file).reduce((sum, p) => sum + p.lines, 0);
  const outputFileId = await writeFile(deps, batch, 'output', of('output'));
  const errorFileId = await writeFile(deps, batch, 'errors', of('errors'));
  // Every object under the prefix, recorded or not: a part written by a runner that lost the lease before recording it too.
  const keys: string[] = [];
  for await (const o of deps.storage.listObjects(batchPartsPrefix(batch.id))) keys.push(o.key);
  await deps.storage.deleteObjects(keys);
  return { outputFileId, errorFileId, completed: lines('output'), failed: lines('errors') };
}
