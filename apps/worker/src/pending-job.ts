import type { Priority } from '@inferq/contracts';

/** A queue job held by the batcher until its batch has run and its result is stored; its inputs are read when the batch is claimed. */
export interface PendingJob {
  jobId: string;
  model: string;
  modelVersion: number;
  priority: Priority;
  /** When the queue job was added. */
  createdAtMs: number;
  /** Attempts before this one (BullMQ's attemptsMade). */
  attemptsMade: number;
  maxAttempts: number;
  /** W3C trace context of the submitting request, when it was traced. */
  traceContext?: Record<string, string>;
  /** The job's deadline, epoch ms. */
  deadlineAt?: number;
  /**
   * Acknowledges (ok) or fails the queue job, or with `release` gives it back
   * to the queue without spending an attempt (a fault of this worker's);
   * called only after Postgres has the outcome.
   */
  settle(outcome: JobOutcome): void;
}

export type JobOutcome = { ok: true } | { ok: false; error: Error; release?: boolean };

export const isLastAttempt = (job: Pick<PendingJob, 'attemptsMade' | 'maxAttempts'>): boolean => job.attemptsMade + 1 >= job.maxAttempts;
