import { UnrecoverableError, WaitingError, Worker, type Job } from 'bullmq';
import type { InferJobPayload } from '@inferq/contracts';
import { BULLMQ_OPTIONS } from '../connection/bullmq-options.ts';
import { createRedisConnection, type RedisClient } from '../connection/connection.ts';
import { priorityOfBull } from '../producer/fair-priority.ts';
import { createJobAck, type AckOutcome, type JobAck, type RepeatedAckHandler } from './job-ack.ts';
import { createJobProducer, type JobProducer, type RequeueRequest } from '../producer/job-producer.ts';
import { queueNameFor } from '../names.ts';
import { isNonRetryableError } from './non-retryable-error.ts';
import { groupEnded, groupTaken, isGroupPayload, type GroupMember } from '../producer/queue-groups.ts';

/** A job as its holder is handed it: a queue entry of its own, or one member of a group entry (queue-groups.ts). */
export interface QueueJob {
  id: string;
  data: InferJobPayload;
  /** Attempts before this one. */
  attemptsMade: number;
  /** Attempts the job may take in all. */
  maxAttempts: number;
  /** Its BullMQ priority number (the fair position in its class). */
  priority: number;
  /** When its queue entry was added, epoch ms. */
  timestamp: number;
  /** The jobs in its queue entry: 1 for a job alone (the consumer's capacity counts entries). */
  entrySize: number;
}

/** A queue entry whose attempt ended: a job alone (its id is the job's) or a group entry (`group-<first member's id>`). */
export interface QueueEntryAttempt {
  id: string;
  /** Attempts made, the one that ended included. */
  attemptsMade: number;
}

export interface QueueConsumerOptions {
  /** A consumer connection (createRedisConnection(url, 'consumer')), or the URL to make one from (closed with the consumer). */
  connection?: RedisClient;
  url?: string;
  prefix: string;
  model: string;
  /** Queue entries held at once (a group entry holds its members). @default 1 */
  concurrency?: number;
  /** How long a held job stays locked without the worker renewing it (BullMQ's lockDuration). */
  lockDurationMs?: number;
  /** How often BullMQ looks for jobs whose lock expired (stalledInterval). */
  stalledIntervalMs?: number;
  /** Stalls before a job fails (maxStalledCount). */
  maxStalledCount?: number;
  /** Told when a job's handle is used a second time (a fault of the holder's: the second use is ignored). */
  onRepeatedAck?: RepeatedAckHandler;
  /** Told of each failed attempt of a queue entry: retried while attempts remain, never after a NonRetryableError. */
  onAttemptFailed?: (entry: QueueEntryAttempt, error: Error) => void;
  /** Told of each queue entry completed; a group entry's value is its members' ids. */
  onEntryCompleted?: (entryId: string, value: unknown) => void;
  /** Told of the consumer's Redis errors; it goes on, and reconnects by itself. Without it they go to the console. */
  onError?: (error: Error) => void;
}

/** One model's consumer, as its owner drives it. */
export interface QueueConsumer {
  /** Queue entries held at once (a group entry holds its members). */
  readonly capacity: number;
  /** Holds up to `entries` queue entries at once from now on: a whole number, at least 1. */
  setCapacity(entries: number): void;
  /** Resolves once it is connected and taking entries. */
  waitUntilReady(): Promise<void>;
  /** Stops taking entries, at once: those held go on to their end. */
  pause(): Promise<void>;
  /** Takes entries again after `pause`. */
  resume(): Promise<void>;
  /** Stops taking entries and resolves once every entry held has ended (each handle used). */
  close(): Promise<void>;
  /** Stops at once: entries held stay locked until their lock expires, and BullMQ's stalled-job check then queues them again. */
  kill(): Promise<void>;
}

/**
 * Consumes one model's queue: the consumer side of the queue, beside the
 * producer, so apps never name a queue or a Redis key themselves. Each job
 * taken is handed to `take` with its handle (`JobAck`): the job is held,
 * its lock renewed, until the handle is used, and then completed, failed or
 * given back as the handle says. A `take` that throws before using the
 * handle fails the attempt with that error.
 */
export function createQueueConsumer(options: QueueConsumerOptions, take: (job: QueueJob, ack: JobAck) => Promise<void> | void): QueueConsumer {
  const connection = options.connection ?? createRedisConnection(requireUrl(options.url), 'consumer');
  // BullMQ checks its options' types: pass only the ones given.
  const tuning = {
    ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
    ...(options.lockDurationMs !== undefined && { lockDuration: options.lockDurationMs }),
    ...(options.stalledIntervalMs !== undefined && { stalledInterval: options.stalledIntervalMs }),
    ...(options.maxStalledCount !== undefined && { maxStalledCount: options.maxStalledCount }),
  };
  const viewOf = (job: Job, id: string, data: InferJobPayload, entrySize = 1): QueueJob => ({
    id,
    data,
    entrySize,
    attemptsMade: job.attemptsMade,
    maxAttempts: job.opts.attempts ?? 1,
    priority: job.priority,
    timestamp: job.timestamp,
  });
  /** Hands one job to `take` with its handle; resolves with how the handle was used. */
  async function handOver(view: QueueJob): Promise<AckOutcome> {
    const ack = createJobAck(view.id, options.onRepeatedAck);
    try {
      await take(view, ack);
    } catch (err) {
      ack.fail(err instanceof Error ? err : new Error(String(err)));
    }
    return ack.outcome;
  }
  let requeue: JobProducer | undefined;
  /**
   * A group entry: each member handed over with a handle of its own. Once every handle is used, the members failed
   * with attempts left or given back are queued again by the producer, each an entry of its own (a failure after the
   * backoff its next attempt would have had); then the entry completes, its value the members' ids (job-events.ts
   * wakes their watches).
   */
  async function holdGroup(job: Job, members: readonly GroupMember[]): Promise<string[]> {
    // The count of waiting jobs is bookkeeping: a Redis error here leaves it high, and fails no job.
    await groupTaken(connection, worker, job.id!, priorityOfBull(job.priority)).catch(() => {});
    const outcomes = await Promise.all(members.map((m) => handOver(viewOf(job, m.jobId, m.payload, members.length))));
    const left = (job.opts.attempts ?? 1) - job.attemptsMade - 1;
    const backoffMs = typeof job.opts.backoff === 'object' ? (job.opts.backoff.delay ?? 0) : (job.opts.backoff ?? 0);
    const again = members.flatMap((m, i): RequeueRequest[] => {
      const o = outcomes[i]!;
      const member = { jobId: m.jobId, payload: m.payload, fairPriority: job.priority };
      if (o.kind === 'release') return [{ ...member, retry: { attempts: left + 1, backoffMs }, delayMs: 0 }];
      if (o.kind === 'fail' && left > 0 && !isNonRetryableError(o.error))
        return [{ ...member, retry: { attempts: left, backoffMs }, delayMs: backoffMs * 2 ** job.attemptsMade }];
      return [];
    });
    if (again.length > 0) {
      requeue ??= createJobProducer({ connection, prefix: options.prefix });
      await requeue.requeueJobs(options.model, again);
    }
    const ids = members.map((m) => m.jobId);
    // Names left behind are harmless: the reconciler's check also asks whether the entry named still exists.
    await groupEnded(connection, worker, job.id!, ids).catch(() => {});
    return ids;
  }
  async function hold(job: Job, token: string | undefined): Promise<unknown> {
    if (isGroupPayload(job.data)) return holdGroup(job, job.data.members);
    const outcome = await handOver(viewOf(job, job.id!, job.data as InferJobPayload));
    if (outcome.kind === 'fail') throw forBullmq(outcome.error);
    if (outcome.kind === 'release') await returnToQueue(job, token);
    return undefined;
  }
  const worker = new Worker(queueNameFor(options.model), hold, { connection, prefix: options.prefix, ...BULLMQ_OPTIONS, ...tuning });
  worker.on('closed', () => {
    void requeue?.close();
    if (!options.connection) connection.disconnect();
  });
  const { onError, onAttemptFailed, onEntryCompleted } = options;
  if (onError) worker.on('error', onError);
  if (onAttemptFailed) worker.on('failed', (job, err) => job && onAttemptFailed({ id: job.id!, attemptsMade: job.attemptsMade }, fromBullmq(err)));
  if (onEntryCompleted) worker.on('completed', (job, value) => onEntryCompleted(job.id!, value));
  return {
    get capacity() {
      return worker.concurrency;
    },
    setCapacity(entries) {
      if (entries !== worker.concurrency) worker.concurrency = entries;
    },
    waitUntilReady: () => worker.waitUntilReady().then(() => undefined),
    pause: () => worker.pause(true),
    resume: () => worker.resume(),
    close: () => worker.close(),
    kill: () => worker.close(true),
  };
}

function requireUrl(url: string | undefined): string {
  if (url === undefined) throw new TypeError('createQueueConsumer needs a connection or a url');
  return url;
}

/** A failure as BullMQ reads it: a NonRetryableError becomes BullMQ's UnrecoverableError, which it never retries. */
function forBullmq(err: Error): Error {
  if (!isNonRetryableError(err)) return err;
  const unrecoverable = new UnrecoverableError(err.message);
  unrecoverable.cause = err;
  unrecoverable.stack = err.stack;
  return unrecoverable;
}

/** The failure the holder gave, back from BullMQ's reading of it. */
const fromBullmq = (err: Error): Error => (err instanceof UnrecoverableError && isNonRetryableError(err.cause) ? err.cause : err);

/**
 * Puts a held job back in its queue at its priority without counting an
 * attempt. Never returns: BullMQ reads the error it throws as "moved, not
 * failed".
 */
async function returnToQueue(job: Job, token: string | undefined): Promise<never> {
  await job.moveToWait(token);
  throw new WaitingError();
}
