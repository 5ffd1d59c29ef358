import { isTerminalStatus, type Job, type JobStatus } from '@inferq/contracts';
import { InferqError, JobWaitTimeoutError } from './errors.ts';

export interface WaitOptions {
  /** Give up (JobWaitTimeoutError) after this long. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Called with the job each time its status changes, the first poll included. */
  onStatus?: (job: Job) => void;
  /** @default 100 — first pause between polls, growing ×1.5 */
  minIntervalMs?: number;
  /** @default 2000 */
  maxIntervalMs?: number;
  encoding?: 'json' | 'base64';
  /** Read the job framed: the finished job's outputs come back as typed arrays (`values`). */
  binary?: boolean;
}

/** Resolves after `ms`; rejects with the signal's reason once it aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Polls until the job is terminal. Polling is not retrying a failure, so this
 * is a loop rather than a retry library; it rides out throttling and brief
 * outages (429, 503, no connection) by waiting `Retry-After`, and throws other errors.
 */
export async function waitForJob(fetchJob: (signal?: AbortSignal) => Promise<Job>, id: string, options: WaitOptions): Promise<Job> {
  const deadline = Date.now() + options.timeoutMs;
  let intervalMs = options.minIntervalMs ?? 100;
  const maxIntervalMs = options.maxIntervalMs ?? 2000;
  let lastStatus: JobStatus | undefined;
  for (;;) {
    let pauseMs = intervalMs;
    try {
      const job = await fetchJob(options.signal);
      if (job.status !== lastStatus) {
        lastStatus = job.status;
        options.onStatus?.(job);
      }
      if (isTerminalStatus(job.status)) return job;
    } catch (err) {
      if (!(err instanceof InferqError) || !err.retryable) throw err;
      if (err.retryAfter !== undefined) pauseMs = Math.max(pauseMs, err.retryAfter * 1000);
    }
    const leftMs = deadline - Date.now();
    if (leftMs <= 0) throw new JobWaitTimeoutError(id, lastStatus, options.timeoutMs);
    await sleep(Math.min(pauseMs, leftMs), options.signal);
    intervalMs = Math.min(intervalMs * 1.5, maxIntervalMs);
  }
}
