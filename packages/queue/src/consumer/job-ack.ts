/** How a held queue job ended: what the consumer tells BullMQ. */
export type AckOutcome = { kind: 'ack' } | { kind: 'fail'; error: Error } | { kind: 'release'; reason: string };

/**
 * The one handle on a queue job the consumer holds, handed to the consumer's
 * `take` with the job. The holder uses it exactly once, after the job's
 * outcome is stored: a second use changes nothing and is reported
 * (`onRepeatedAck`), never applied.
 */
export interface JobAck {
  readonly jobId: string;
  /** Completes the queue job. */
  ack(): void;
  /** Fails this attempt: BullMQ retries it while attempts remain, and never for a `NonRetryableError`. */
  fail(error: Error): void;
  /** Gives the job back to its queue at its priority without spending an attempt: a fault of the holder's, not the job's. */
  release(reason: string): void;
  /** Whether ack, fail or release has been called. */
  readonly isAcknowledged: boolean;
  /** Resolves with the outcome once the handle is used; for whoever watches the job end (a trace span). */
  readonly outcome: Promise<AckOutcome>;
}

/** Told of a handle used a second time: `repeated` was ignored, `first` stands. */
export type RepeatedAckHandler = (jobId: string, repeated: AckOutcome['kind'], first: AckOutcome['kind']) => void;

export function createJobAck(jobId: string, onRepeatedAck?: RepeatedAckHandler): JobAck {
  let first: AckOutcome | undefined;
  let resolve!: (outcome: AckOutcome) => void;
  const outcome = new Promise<AckOutcome>((r) => (resolve = r));
  const use = (o: AckOutcome): void => {
    if (first) {
      onRepeatedAck?.(jobId, o.kind, first.kind);
      return;
    }
    first = o;
    resolve(o);
  };
  return {
    jobId,
    ack: () => use({ kind: 'ack' }),
    fail: (error) => use({ kind: 'fail', error }),
    release: (reason) => use({ kind: 'release', reason }),
    get isAcknowledged() {
      return first !== undefined;
    },
    outcome,
  };
}
