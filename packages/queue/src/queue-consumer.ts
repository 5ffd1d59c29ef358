import { Queue, UnrecoverableError, WaitingError, Worker, type Job } from 'bullmq';
import type { InferJobPayload } from '@inferq/contracts';
import { createRedisConnection, type RedisClient } from './connection.ts';
import { priorityOfBull } from './fair-priority.ts';
import { createJobAck, type AckOutcome, type JobAck, type RepeatedSettleHandler } from './job-ack.ts';
import { jobOptions } from './job-options.ts';
import { JOB_NAME, queueNameFor } from './names.ts';
import { groupEnded, groupTaken, isGroupPayload, type GroupMember } from './queue-groups.ts';

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
  /** The jobs in its queue entry: 1 for a job alone (the consumer's `concurrency` counts entries). */
  entrySize: number;
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
  onRepeatedSettle?: RepeatedSettleHandler;
}

/**
 * Consumes one model's queue: the consumer side of the queue, beside the
 * producer, so apps never name a queue or a Redis key themselves. Each job
 * taken is handed to `take` with its handle (`JobAck`): the job is held,
 * its lock renewed, until the handle is used, and then completed, failed or
 * given back as the handle says. A `take` that throws before using the
 * handle fails the attempt with that error. Returns BullMQ's Worker
 * (`close()`, `close(true)` to stop at once, `pause`, events).
 */
export function createQueueConsumer(options: QueueConsumerOptions, take: (job: QueueJob, ack: JobAck) => Promise<void> | void): Worker {
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
    const ack = createJobAck(view.id, options.onRepeatedSettle);
    try {
      await take(view, ack);
    } catch (err) {
      ack.fail(err instanceof Error ? err : new Error(String(err)));
    }
    return ack.outcome;
  }
  let requeue: Queue | undefined;
  /**
   * A group entry: each member handed over with a handle of its own. Once every handle is used, the members failed
   * with attempts left or given back are queued again, each an entry of its own (a failure after the backoff its next
   * attempt would have had); then the entry completes, its value the members' ids (job-events.ts wakes their watches).
   */
  async function holdGroup(job: Job, members: readonly GroupMember[]): Promise<string[]> {
    // The count of waiting jobs is bookkeeping: a Redis error here leaves it high, and fails no job.
    await groupTaken(connection, worker, job.id!, priorityOfBull(job.priority)).catch(() => {});
    const outcomes = await Promise.all(members.map((m) => handOver(viewOf(job, m.jobId, m.payload, members.length))));
    const left = (job.opts.attempts ?? 1) - job.attemptsMade - 1;
    const backoffMs = typeof job.opts.backoff === 'object' ? (job.opts.backoff.delay ?? 0) : (job.opts.backoff ?? 0);
    const again = members.flatMap((m, i) => {
      const o = outcomes[i]!;
      if (o.kind === 'release') return [{ m, attempts: left + 1, delay: 0 }];
      if (o.kind === 'fail' && left > 0 && !(o.error instanceof UnrecoverableError)) return [{ m, attempts: left, delay: backoffMs * 2 ** job.attemptsMade }];
      return [];
    });
    if (again.length > 0) {
      requeue ??= new Queue(queueNameFor(options.model), { connection, prefix: options.prefix, skipVersionCheck: true });
      // Without the carried inputs' headers: their bytes went with the batch, so the claim reads the row's.
      await requeue.addBulk(
        again.map(({ m, attempts, delay }) => {
          const { inputs: _carried, ...payload } = m.payload;
          return { name: JOB_NAME, data: payload, opts: { ...jobOptions(m.jobId, job.priority), attempts, backoff: job.opts.backoff, delay } };
        }),
      );
    }
    const ids = members.map((m) => m.jobId);
    // Names left behind are harmless: the reconciler's check also asks whether the entry named still exists.
    await groupEnded(connection, worker, job.id!, ids).catch(() => {});
    return ids;
  }
  async function hold(job: Job, token: string | undefined): Promise<unknown> {
    if (isGroupPayload(job.data)) return holdGroup(job, job.data.members);
    const outcome = await handOver(viewOf(job, job.id!, job.data as InferJobPayload));
    if (outcome.kind === 'fail') throw outcome.error;
    if (outcome.kind === 'release') await returnToQueue(job, token);
    return undefined;
  }
  const worker = new Worker(queueNameFor(options.model), hold, { connection, prefix: options.prefix, skipVersionCheck: true, ...tuning });
  worker.on('closed', () => {
    void requeue?.close();
    if (!options.connection) connection.disconnect();
  });
  return worker;
}

function requireUrl(url: string | undefined): string {
  if (url === undefined) throw new TypeError('createQueueConsumer needs a connection or a url');
  return url;
}

/**
 * Puts a held job back in its queue at its priority without counting an
 * attempt. Never returns: BullMQ reads the error it throws as "moved, not
 * failed".
 */
async function returnToQueue(job: Job, token: string | undefined): Promise<never> {
  await job.moveToWait(token);
  throw new WaitingError();
}
