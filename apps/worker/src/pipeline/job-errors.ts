import { ErrorCatalogue, isErrorCode, type ErrorCode } from '@inferq/contracts';
import { isAppError } from '@inferq/core';
import { isDatabaseUnavailable } from '@inferq/db';
import { isStorageUnavailable } from '@inferq/storage';

export interface ClassifiedError {
  code: ErrorCode;
  message: string;
  retryable: boolean;
}

/** Maps anything thrown while running jobs to a stored code; unknown errors are retryable. */
export function classifyError(err: unknown): ClassifiedError {
  if (isAppError(err)) return { code: err.code, message: err.message, retryable: err.retryable };
  const code = (err as { code?: unknown })?.code;
  const message = err instanceof Error ? err.message : String(err);
  if (isErrorCode(code)) return { code, message, retryable: ErrorCatalogue[code].retryable };
  return { code: 'INTERNAL', message, retryable: true };
}

/** Postgres cannot be reached: every worker is stopped alike, so it is waited out wherever it is met. */
export const isRecordOutage = (err: unknown): boolean => isDatabaseUnavailable(err);

/** Postgres or S3 cannot be reached: no fault of the job, so it is waited out rather than failing the job. */
export const isOutage = (err: unknown): boolean => isDatabaseUnavailable(err) || isStorageUnavailable(err);
