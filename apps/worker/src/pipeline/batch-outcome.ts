import type { RawTensor } from '@inferq/contracts';
import { NonRetryableError, type AckOutcome } from '@inferq/queue';
import type { ClassifiedError } from './job-errors.ts';
import { isLastAttempt, type ClaimedJob, type LoadedJob, type PendingJob } from './pending-job.ts';

/**
 * What became of one job of a batch, as a value: each step of the batch returns its jobs' outcomes, completion stores
 * them and only then acknowledges their queue entries (batch-completion.ts).
 */
export type JobOutcome =
  /** It ran: its outputs are stored with the batch's record, and its entry is completed. */
  | { kind: 'succeeded'; job: LoadedJob; outputs: RawTensor[]; inferMs: number; items: number; deviceMs: number }
  /** It failed with a code: stored, and its entry fails the attempt (final when not retryable or its last). */
  | { kind: 'failed'; job: ClaimedJob; error: ClassifiedError }
  /** It would finish after its deadline: stored as expired, unrun, and its entry is completed. */
  | { kind: 'expired'; job: ClaimedJob; message: string }
  /** A fault of this worker's, not the job's: its claim undone, and its entry goes back to the queue unspent. */
  | { kind: 'released'; job: ClaimedJob; reason: string };

/** The attempt a failure ends, and whether it is the job's last: not retryable, or no attempt left. */
export const isFinalFailure = (job: Pick<PendingJob, 'attemptsMade' | 'maxAttempts'>, error: ClassifiedError): boolean =>
  !error.retryable || isLastAttempt(job);

/** The queue error a failure fails its entry with: one the queue never retries for a failure that is not retryable (a last attempt has none left anyway). */
export function queueErrorOf(error: ClassifiedError): Error {
  const text = `${error.code}: ${error.message}`;
  return error.retryable ? new Error(text) : new NonRetryableError(text);
}

/** What the queue is told of an outcome once Postgres holds it. */
export function acknowledgementOf(outcome: JobOutcome): AckOutcome {
  switch (outcome.kind) {
    case 'succeeded':
    case 'expired':
      return { kind: 'ack' };
    case 'failed':
      return { kind: 'fail', error: queueErrorOf(outcome.error) };
    case 'released':
      return { kind: 'release', reason: outcome.reason };
  }
}
