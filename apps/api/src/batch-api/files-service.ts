import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Multipart } from '@fastify/multipart';
import { v7 as uuidv7 } from 'uuid';
import type { FileList, FileObject, ListFilesQuery } from '@inferq/contracts';
import { AppError, type Logger } from '@inferq/core';
import { deleteFile, fileInUse, findFile, insertFile, listFiles, type FileRecord, type Pool } from '@inferq/db';
import { fileObjectKey, type Storage } from '@inferq/storage';
import { ownerFilter, type Principal } from '../services/api-keys-service.ts';

// Batch API files (POST /v1/files): a JSONL upload is streamed to object
// storage as it arrives, counted on the way; the row is written once the
// object is whole. Output and error files are written by the batch runner.

export interface FilesService {
  /** Reads the multipart form (`purpose` and `file`, in either order) and keeps the file. */
  upload(principal: Principal, parts: AsyncIterable<Multipart>): Promise<FileObject>;
  get(principal: Principal, id: string): Promise<FileObject>;
  /** The file's bytes, streamed from object storage. */
  content(principal: Principal, id: string): Promise<{ file: FileRecord; body: NodeJS.ReadableStream }>;
  remove(principal: Principal, id: string): Promise<void>;
  list(principal: Principal, query: ListFilesQuery): Promise<FileList>;
}

export interface FilesServiceDeps {
  pool: Pool;
  storage: Pick<Storage, 'putObjectStream' | 'getObjectStream' | 'deleteObjects'>;
  logger: Logger;
  /** BATCH_FILE_MAX_BYTES */
  maxBytes: number;
}

/** A new file id, OpenAI-like (`file-` and 32 hex digits), time-ordered. */
export const newFileId = (): string => `file-${uuidv7().replaceAll('-', '')}`;

export const toFileObject = (f: FileRecord): FileObject => ({
  id: f.id,
  object: 'file',
  bytes: f.bytes,
  created_at: Math.floor(f.createdAt.getTime() / 1000),
  filename: f.filename,
  purpose: f.purpose,
  status: 'processed',
  expires_at: null,
});

const invalid = (message: string, param: string) =>
  new AppError('VALIDATION_FAILED', message, { errors: [{ pointer: `/body/${param}`, code: 'VALIDATION_FAILED', detail: message }] });

export function createFilesService(deps: FilesServiceDeps): FilesService {
  async function find(principal: Principal, id: string): Promise<FileRecord> {
    const file = await findFile(deps.pool, id, ownerFilter(principal));
    if (!file) throw new AppError('FILE_NOT_FOUND', `file ${id} does not exist`);
    return file;
  }

  /** Streams one file part to its object; its size, or an error when it was over the limit (the object is deleted then). */
  async function store(part: Multipart & { type: 'file' }, objectKey: string): Promise<number> {
    let bytes = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        bytes += chunk.length;
        done(null, chunk);
      },
    });
    const put = deps.storage.putObjectStream(objectKey, counter, { contentType: 'application/jsonl' });
    await Promise.all([pipeline(part.file, counter), put]);
    if (part.file.truncated) {
      await deps.storage.deleteObjects([objectKey]);
      throw new AppError('PAYLOAD_TOO_LARGE', `the file is larger than BATCH_FILE_MAX_BYTES (${deps.maxBytes} bytes)`);
    }
    return bytes;
  }

  return {
    async upload(principal, parts) {
      const id = newFileId();
      const objectKey = fileObjectKey(id);
      let purpose: string | undefined;
      let stored: { filename: string; bytes: number } | undefined;
      try {
        for await (const part of parts) {
          if (part.type === 'field') {
            if (part.fieldname === 'purpose') purpose = String(part.value);
          } else if (part.fieldname === 'file' && !stored) {
            // A name Postgres can keep: no NUL (text holds none), at most 255 characters (code points).
            const filename = [...(part.filename ?? '').replaceAll('\0', '')].slice(0, 255).join('') || 'file.jsonl';
            stored = { filename, bytes: await store(part, objectKey) };
          } else part.file.resume();
        }
        if (purpose !== 'batch') throw invalid(`purpose must be "batch" (got ${purpose === undefined ? 'none' : JSON.stringify(purpose)})`, 'purpose');
        if (!stored) throw invalid('the form has no "file" part', 'file');
      } catch (err) {
        if (stored) await deps.storage.deleteObjects([objectKey]).catch(() => undefined);
        throw err;
      }
      const record: FileRecord = { id, ownerKeyId: principal.keyId, purpose: 'batch', objectKey, createdAt: new Date(), ...stored };
      await insertFile(deps.pool, record);
      deps.logger.info({ fileId: id, bytes: stored.bytes }, 'file uploaded');
      return toFileObject(record);
    },

    async get(principal, id) {
      return toFileObject(await find(principal, id));
    },

    async content(principal, id) {
      const file = await find(principal, id);
      return { file, body: await deps.storage.getObjectStream(file.objectKey) };
    },

    async remove(principal, id) {
      const file = await find(principal, id);
      if (await fileInUse(deps.pool, id)) throw new AppError('FILE_IN_USE', `a batch that has not ended reads file ${id}; cancel it first`);
      if (await deleteFile(deps.pool, id)) await deps.storage.deleteObjects([file.objectKey]);
    },

    async list(principal, query) {
      const limit = query.limit ?? 20;
      const rows = await listFiles(deps.pool, { ownerKeyId: ownerFilter(principal), purpose: query.purpose, after: query.after, limit: limit + 1 });
      const data = rows.slice(0, limit).map(toFileObject);
      return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: rows.length > limit };
    },
  };
}
