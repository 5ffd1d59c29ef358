import type { JobsOptions } from 'bullmq';

export interface RetryOptions {
  /** @default 3 */
  attempts: number;
  /** First retry delay; doubles each attempt. @default 500 */
  backoffMs: number;
}

export const DEFAULT_RETRY: RetryOptions = { attempts: 3, backoffMs: 500 };

/** History lives in Postgres, so finished queue jobs are removed from Redis (DESIGN invariant 5). */
export const jobOptions = (jobId: string, priority: number, retry: RetryOptions = DEFAULT_RETRY): JobsOptions => ({
  jobId,
  priority,
  attempts: retry.attempts,
  backoff: { type: 'exponential', delay: retry.backoffMs },
  removeOnComplete: true,
  removeOnFail: true,
});
