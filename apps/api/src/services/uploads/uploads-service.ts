import { randomUUID } from 'node:crypto';
import { byteLengthOf, type CreateUploadBody, type StoredTensor, type Upload } from '@inferq/contracts';
import { AppError, type Logger } from '@inferq/core';
import { claimUpload, findUsableUpload, insertUpload, releaseUpload, type Pool } from '@inferq/db';
import { uploadObjectKey, type Storage, type TensorHead, type TensorSlot, type TensorStore } from '@inferq/storage';
import type { Principal } from '../keys/api-keys-service.ts';
import type { UploadClaims } from './upload-claims.ts';

export interface UploadsServiceDeps {
  pool: Pool;
  storage: Pick<Storage, 'presignPut' | 'headObject' | 'deleteObjects'>;
  tensors: Pick<TensorStore, 'adoptObject'>;
  logger: Logger;
  /** UPLOAD_TTL_S: how long the presigned URL and the unused upload last. */
  ttlS: number;
  /** INPUT_MAX_BYTES: no job takes an input larger than this, so no upload is made for one. */
  maxBytes: number;
  onEvent?(event: 'created' | 'claimed'): void;
}

export interface UploadsService extends UploadClaims {
  create(principal: Principal, body: CreateUploadBody): Promise<Upload>;
}

const CONTENT_TYPE = 'application/octet-stream';
const sameShape = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((d, i) => d === b[i]);

/**
 * Uploads of one input tensor each, as SageMaker asynchronous inference takes its input from S3: `create`
 * records what the client will put and presigns a PUT of exactly that many bytes; `claim` (the submit path,
 * for an input naming the upload) checks it and moves the object into the job's input key.
 */
export function createUploadsService(deps: UploadsServiceDeps): UploadsService {
  /** The uploads each submit in flight has claimed, by job id, until `settle`. */
  const claimed = new Map<string, Array<{ uploadId: string; objectKey: string }>>();
  const notFound = (id: string) => new AppError('UPLOAD_NOT_FOUND', `upload ${id} does not exist, is not this key's, was used already or has expired`);

  return {
    async create(principal, { datatype, shape }) {
      // A presigned PUT is of an exact length; BYTES elements have none the shape gives.
      if (datatype === 'BYTES') throw new AppError('DATATYPE_UNSUPPORTED', 'BYTES inputs cannot be uploaded: send them as JSON strings, base64 or binary data');
      const bytes = byteLengthOf(datatype, shape);
      if (bytes === undefined) throw new AppError('VALIDATION_FAILED', `shape [${shape.join(', ')}] has too many elements`);
      if (bytes > deps.maxBytes) throw new AppError('INPUT_TOO_LARGE', `the tensor holds ${bytes} bytes; the limit is ${deps.maxBytes}`);
      const id = randomUUID();
      const createdAt = new Date();
      const expiresAt = new Date(createdAt.getTime() + deps.ttlS * 1000);
      const objectKey = uploadObjectKey(id, createdAt);
      // Signed before the row exists: a failure here leaves nothing behind.
      const put = await deps.storage.presignPut(objectKey, { expiresInS: deps.ttlS, contentLength: bytes, contentType: CONTENT_TYPE });
      await insertUpload(deps.pool, { id, ownerKeyId: principal.keyId, datatype, shape, bytes, objectKey, createdAt, expiresAt });
      deps.onEvent?.('created');
      return { id, url: put.url, method: 'PUT', headers: put.headers, bytes, expiresAt: expiresAt.toISOString() };
    },

    async claim(principal: Principal, uploadId: string, slot: TensorSlot, index: number, head: TensorHead, bytes: number): Promise<StoredTensor> {
      // Every check before the claim, so a request that fails one leaves the upload usable.
      const upload = await findUsableUpload(deps.pool, uploadId, principal.keyId);
      if (!upload) throw notFound(uploadId);
      if (upload.datatype !== head.datatype || !sameShape(upload.shape, head.shape) || upload.bytes !== bytes) {
        throw new AppError(
          'UPLOAD_MISMATCH',
          `input "${head.name}" is ${head.datatype} [${head.shape.join(', ')}]; upload ${uploadId} is ${upload.datatype} [${upload.shape.join(', ')}]`,
        );
      }
      // S3 refuses a PUT of another length than the signed one; the size is checked here too (servers that do not, a PUT not made yet).
      const object = await deps.storage.headObject(upload.objectKey);
      if (object?.sizeBytes !== upload.bytes) {
        throw new AppError(
          'UPLOAD_INCOMPLETE',
          object
            ? `upload ${uploadId} holds ${object.sizeBytes} bytes, not the ${upload.bytes} it was created for`
            : `upload ${uploadId} has not been put yet: PUT its ${upload.bytes} bytes to the URL it was created with`,
        );
      }
      if (!(await claimUpload(deps.pool, uploadId, principal.keyId, slot.jobId))) throw notFound(uploadId);
      let stored: StoredTensor;
      try {
        stored = await deps.tensors.adoptObject(slot, index, head, upload.objectKey, upload.bytes);
      } catch (err) {
        // The job does not get it: the upload stays usable for another try.
        await releaseUpload(deps.pool, uploadId, slot.jobId).catch((e: Error) => deps.logger.warn({ err: e.message, uploadId }, 'releasing an upload failed'));
        throw err;
      }
      deps.onEvent?.('claimed');
      const held = claimed.get(slot.jobId) ?? [];
      held.push({ uploadId, objectKey: upload.objectKey });
      claimed.set(slot.jobId, held);
      return stored;
    },

    async settle(jobId, recorded) {
      const held = claimed.get(jobId);
      if (!held) return;
      claimed.delete(jobId);
      if (!recorded) {
        // The job's copies are left to the orphan sweep; a release that fails leaves the upload used, as before.
        await Promise.all(
          held.map(({ uploadId }) =>
            releaseUpload(deps.pool, uploadId, jobId).catch((e: Error) => deps.logger.warn({ err: e.message, uploadId }, 'releasing an upload failed')),
          ),
        );
        return;
      }
      // The job has its own copy now; a failed delete is left to the upload sweep and the bucket's expiry rule.
      const keys = held.map((h) => h.objectKey);
      await deps.storage
        .deleteObjects(keys)
        .catch((err: Error) => deps.logger.warn({ err: err.message, jobId, keys }, 'deleting a claimed upload object failed'));
    },
  };
}
