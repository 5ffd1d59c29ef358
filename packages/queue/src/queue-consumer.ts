import { WaitingError, Worker, type Job } from 'bullmq';
import type { InferJobPayload } from '@inferq/contracts';
import { createRedisConnection, type RedisClient } from './connection.ts';
import { createJobAck, type JobAck, type RepeatedSettleHandler } from './job-ack.ts';
import { queueNameFor } from './names.ts';

export type QueueJob = Job<InferJobPayload>;

export interface QueueConsumerOptions {
  /** A consumer connection (createRedisConnection(url, 'consumer')), or the URL to make one from (closed with the consumer). */
  connection?: RedisClient;
  url?: string;
  prefix: string;
  model: string;
  /** Jobs held at once. @default 1 */
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
export function createQueueConsumer(options: QueueConsumerOptions, take: (job: QueueJob, ack: JobAck) => Promise<void> | void): Worker<InferJobPayload> {
  const connection = options.connection ?? createRedisConnection(requireUrl(options.url), 'consumer');
  // BullMQ checks its options' types: pass only the ones given.
  const tuning = {
    ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
    ...(options.lockDurationMs !== undefined && { lockDuration: options.lockDurationMs }),
    ...(options.stalledIntervalMs !== undefined && { stalledInterval: options.stalledIntervalMs }),
    ...(options.maxStalledCount !== undefined && { maxStalledCount: options.maxStalledCount }),
  };
  async function hold(job: QueueJob, token: string | undefined): Promise<void> {
    const ack = createJobAck(job.id!, options.onRepeatedSettle);
    try {
      await take(job, ack);
    } catch (err) {
      ack.fail(err instanceof Error ? err : new Error(String(err)));
    }
    const outcome = await ack.outcome;
    if (outcome.kind === 'fail') throw outcome.error;
    if (outcome.kind === 'release') await returnToQueue(job, token);
  }
  const worker = new Worker<InferJobPayload>(queueNameFor(options.model), hold, { connection, prefix: options.prefix, skipVersionCheck: true, ...tuning });
  if (!options.connection) worker.on('closed', () => connection.disconnect());
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
async function returnToQueue(job: QueueJob, token: string | undefined): Promise<never> {
  await job.moveToWait(token);
  throw new WaitingError();
}
