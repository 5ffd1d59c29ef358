import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Multipart } from '@fastify/multipart';
import { v7 as uuidv7 } from 'uuid';
import { FILE_EXPIRY_MAX_S, FILE_EXPIRY_MIN_S, type FileList, type FileObject, type ListFilesQuery } from '@inferq/contracts';
import { AppError, type Logger } from '@inferq/core';
import { deleteFile, fileInUse, findFile, insertFile, listFiles, type FileRecord, type Pool } from '@inferq/db';
import { fileObjectKey, type Storage } from '@inferq/storage';
import { ownerFilter, type Principal } from '../services/keys/api-keys-service.ts';

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
  /** BATCH_FILE_EXPIRES_S: an upload's life when it names none; 0: kept until deleted. */
  defaultExpiresS: number;
}

/** A new file id, OpenAI-like (`file-` and 32 hex digits), time-ordered. */
const newFileId = (): string => `file-${uuidv7().replaceAll('-', '')}`;

const toFileObject = (f: FileRecord): FileObject => ({
  id: f.id,
  object: 'file',
  bytes: f.bytes,
  created_at: Math.floor(f.createdAt.getTime() / 1000),
  filename: f.filename,
  purpose: f.purpose,
  status: 'processed',
  expires_at: f.expiresAt && Math.floor(f.expiresAt.getTime() / 1000),
});

const invalid = (message: string, param: string) =>
  new AppError('VALIDATION_FAILED', message, { errors: [{ pointer: `/body/${param}`, code: 'VALIDATION_FAILED', detail: message }] });

/**
 * An upload's `expires_after` as OpenAI's clients send it in the form (`expires_after[anchor]`,
 * `expires_after[seconds]`): its seconds; undefined when absent.
 */
function expiresAfterSeconds(fields: Map<string, string>): number | undefined {
  const anchor = fields.get('expires_after[anchor]');
  const seconds = fields.get('expires_after[seconds]');
  if (anchor === undefined && seconds === undefined) return undefined;
  if (anchor !== 'created_at') throw invalid(`expires_after[anchor] must be "created_at" (got ${JSON.stringify(anchor ?? null)})`, 'expires_after/anchor');
  const n = Number(seconds);
  if (!/^\d+$/.test(seconds ?? '') || n < FILE_EXPIRY_MIN_S || n > FILE_EXPIRY_MAX_S)
    throw invalid(`expires_after[seconds] must be a whole number from ${FILE_EXPIRY_MIN_S} to ${FILE_EXPIRY_MAX_S}`, 'expires_after/seconds');
  return n;
}

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
      const fields = new Map<string, string>();
      let stored: { filename: string; bytes: number } | undefined;
      let expiresS: number | undefined;
      try {
        for await (const part of parts) {
          if (part.type === 'field') fields.set(part.fieldname, String(part.value));
          else if (part.fieldname === 'file' && !stored) {
            // A name Postgres can keep: no NUL (text holds none), at most 255 characters (code points).
            const filename = [...(part.filename ?? '').replaceAll('\0', '')].slice(0, 255).join('') || 'file.jsonl';
            stored = { filename, bytes: await store(part, objectKey) };
          } else part.file.resume();
        }
        const purpose = fields.get('purpose');
        if (purpose !== 'batch') throw invalid(`purpose must be "batch" (got ${purpose === undefined ? 'none' : JSON.stringify(purpose)})`, 'purpose');
        if (!stored) throw invalid('the form has no "file" part', 'file');
        expiresS = expiresAfterSeconds(fields) ?? (deps.defaultExpiresS > 0 ? deps.defaultExpiresS : undefined);
      } catch (err) {
        if (stored) await deps.storage.deleteObjects([objectKey]).catch(() => undefined);
        throw err;
      }
      const createdAt = new Date();
      const expiresAt = expiresS === undefined ? null : new Date(createdAt.getTime() + expiresS * 1000);
      const record: FileRecord = { id, ownerKeyId: principal.keyId, purpose: 'batch', objectKey, createdAt, expiresAt, ...stored };
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
