import type { ErrorCode, JobStatus, Problem } from '@inferq/contracts';

/** A catalogue code, or one the SDK makes up when no problem+json came back. */
export type InferqErrorCode = ErrorCode | 'HTTP_ERROR' | 'NETWORK_ERROR';

export type ProblemFieldError = NonNullable<Problem['errors']>[number];

/** A failed API call: the server's problem+json, or a made-up one for network and non-JSON failures (status 0 / HTTP_ERROR). */
export class InferqError extends Error {
  readonly status: number;
  readonly code: InferqErrorCode;
  readonly title: string;
  readonly detail: string | undefined;
  /** Per-field errors with JSON pointers (`/body/inputs/0/shape`). */
  readonly errors: ProblemFieldError[];
  /** Seconds to wait before retrying, from `Retry-After` (429 and 503). */
  readonly retryAfter: number | undefined;
  /** The request id, for the server's logs. */
  readonly instance: string | undefined;
  /** The whole problem body, extension members included (410 `JOB_PURGED`: `purgedAt`, `purgeReason`, `job`). */
  readonly problem: Problem;

  constructor(problem: Problem, options: { retryAfter?: number; cause?: unknown } = {}) {
    super(problem.detail ?? problem.title, { cause: options.cause });
    this.name = 'InferqError';
    this.status = problem.status;
    this.code = problem.code as InferqErrorCode;
    this.title = problem.title;
    this.detail = problem.detail;
    this.errors = problem.errors ?? [];
    this.retryAfter = options.retryAfter;
    this.instance = problem.instance;
    this.problem = problem;
  }

  /** Worth sending again as is: throttled, briefly unavailable, or not reached. */
  get retryable(): boolean {
    return this.status === 429 || this.status === 503 || this.status === 0;
  }
}

export function isInferqError(err: unknown, code?: InferqErrorCode): err is InferqError {
  return err instanceof InferqError && (code === undefined || err.code === code);
}

/** `jobs.wait` ran out of time; the job is still queued or running. */
export class JobWaitTimeoutError extends Error {
  constructor(
    readonly jobId: string,
    readonly lastStatus: JobStatus | undefined,
    readonly timeoutMs: number,
  ) {
    super(`job ${jobId} was still ${lastStatus ?? 'unknown'} after ${timeoutMs} ms`);
    this.name = 'JobWaitTimeoutError';
  }
}
