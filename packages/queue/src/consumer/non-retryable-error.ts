/**
 * A job failure that no further attempt can mend (bad input, an unknown model version): the consumer spends no retry
 * on it, whatever attempts the job has left. Fail a held job with it through its handle (`ack.fail`), or throw it from
 * `take`; the consumer hands it to BullMQ as BullMQ's own UnrecoverableError, so no BullMQ type leaves this package.
 */
export class NonRetryableError extends Error {
  constructor(message?: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'NonRetryableError';
  }
}

/**
 * Whether an error must not be retried. By its name too, as BullMQ checks its own: an error built by another copy of
 * this module (a second bundle, a worker thread's) is no instance of this one's class.
 */
export const isNonRetryableError = (err: unknown): err is Error =>
  err instanceof NonRetryableError || (err instanceof Error && err.name === 'NonRetryableError');
