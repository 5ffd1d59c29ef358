export interface RetryOptions {
  /** @default 3 */
  attempts: number;
  /** First retry delay; doubles each attempt. @default 500 */
  backoffMs: number;
}

export const DEFAULT_RETRY: RetryOptions = { attempts: 3, backoffMs: 500 };

/** The options inferq gives every queue job, in BullMQ's names: a BullMQ `add` takes them as they are. */
export interface QueueJobOptions {
  jobId: string;
  /** BullMQ's number: lower is served first (fair-priority.ts). */
  priority: number;
  attempts: number;
  /** Exponential: `delay` ms before the first retry, doubled each attempt after. */
  backoff: { type: 'exponential'; delay: number };
  removeOnComplete: boolean;
  removeOnFail: boolean;
}

/** History lives in Postgres, so finished queue jobs are removed from Redis (DESIGN invariant 5). */
export const jobOptions = (jobId: string, priority: number, retry: RetryOptions = DEFAULT_RETRY): QueueJobOptions => ({
  jobId,
  priority,
  attempts: retry.attempts,
  backoff: { type: 'exponential', delay: retry.backoffMs },
  removeOnComplete: true,
  removeOnFail: true,
});
