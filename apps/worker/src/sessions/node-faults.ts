import { isAppError } from '@inferq/core';
import { isStorageUnavailable } from '@inferq/storage';

/**
 * Whose fault a failed model load is.
 * - `model`: it follows the model wherever it runs: not registered, an artifact missing or failing its
 *   checksum, a verified artifact onnxruntime cannot open (a parse or graph error).
 * - `node`: this worker's own (S3 unreachable or refusing its credentials, a cache disk that is full or
 *   unwritable): the job goes back for another worker and spends no attempt.
 * - `suspect`: a session that would not open for want of something on this machine (memory, a device, an
 *   execution provider): the worker's fault the first time; the model's once a second worker fails the
 *   same job the same way.
 */
export type LoadFaultOwner = 'model' | 'node' | 'suspect';

const MODEL_CODES = new Set(['MODEL_NOT_FOUND', 'MODEL_ARTIFACT_INVALID']);
/** Local file system and memory errors: the disk or the machine, never the model. */
const NODE_SYSTEM_CODES = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM', 'ENOTDIR', 'EEXIST', 'EMFILE', 'ENFILE', 'ENOMEM', 'EIO']);
/** S3 refusing who we are, or the SDK finding no credentials at all: the worker's configuration. */
const S3_AUTH_ERRORS = new Set(['AccessDenied', 'InvalidAccessKeyId', 'SignatureDoesNotMatch', 'ExpiredToken', 'InvalidToken', 'CredentialsProviderError']);

export function ownerOfLoadFailure(err: unknown): LoadFaultOwner {
  if (isAppError(err)) return MODEL_CODES.has(err.code) ? 'model' : 'suspect';
  const e = err as { code?: unknown; name?: unknown; $metadata?: { httpStatusCode?: number } } | undefined;
  if (isStorageUnavailable(err)) return 'node';
  // A missing artifact follows the model; a missing bucket is this worker's configuration.
  if (e?.name === 'NoSuchKey') return 'model';
  if (e?.name === 'NoSuchBucket') return 'node';
  if (typeof e?.name === 'string' && S3_AUTH_ERRORS.has(e.name)) return 'node';
  const status = e?.$metadata?.httpStatusCode;
  if (status === 401 || status === 403) return 'node';
  if (typeof e?.code === 'string' && NODE_SYSTEM_CODES.has(e.code)) return 'node';
  if (e?.name === 'ModelLoadError') return ownerOfSessionFailure(err as Error & { failedProviders: Array<{ reason: string }> });
  const message = err instanceof Error ? err.message : String(err);
  return MACHINE_TROUBLE.test(message) ? 'suspect' : 'model';
}

/** onnxruntime could not open the verified local file: by what each execution provider said. */
function ownerOfSessionFailure(err: Error & { failedProviders: Array<{ reason: string }> }): LoadFaultOwner {
  if (/cannot be read/.test(err.message)) return 'node';
  // The session thread died while loading (memory, most likely).
  if (err.failedProviders.length === 0) return 'suspect';
  return err.failedProviders.every((f) => MACHINE_TROUBLE.test(f.reason)) ? 'suspect' : 'model';
}

/** onnxruntime's words for a session that failed for want of memory, a device or a provider on this machine. */
const MACHINE_TROUBLE = /out of memory|bad_alloc|cannot allocate|failed to allocate|cuda|cudnn|tensorrt|execution provider|no device|device lost/i;
