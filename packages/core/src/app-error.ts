import { ErrorCatalogue, type ErrorCode } from '@inferq/contracts';

export interface ProblemItem {
  pointer: string;
  code: string;
  detail: string;
}

/** The one error type for failures on purpose; its code maps to status and title in the catalogue. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryable: boolean;
  readonly errors: ProblemItem[] | undefined;
  readonly headers: Record<string, string> | undefined;
  /** RFC 9457 extension members of the problem body (their names must be in ProblemSchema, which serialises it). */
  readonly extensions: Record<string, unknown> | undefined;

  constructor(
    code: ErrorCode,
    detail?: string,
    options: { cause?: unknown; errors?: ProblemItem[]; headers?: Record<string, string>; extensions?: Record<string, unknown> } = {},
  ) {
    super(detail ?? ErrorCatalogue[code].title, { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = ErrorCatalogue[code].status;
    this.retryable = ErrorCatalogue[code].retryable;
    this.errors = options.errors;
    this.headers = options.headers;
    this.extensions = options.extensions;
  }
}

export const isAppError = (err: unknown): err is AppError => err instanceof AppError;
