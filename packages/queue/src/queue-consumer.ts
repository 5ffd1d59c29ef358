import { WaitingError, Worker, type Job } from 'bullmq';
import type { InferJobPayload } from '@inferq/contracts';
import { createRedisConnection, type RedisClient } from './connection.ts';
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
}

/**
 * Consumes one model's queue: the consumer side of the queue, beside the
 * producer, so apps never name a queue or a Redis key themselves. Returns
 * BullMQ's Worker (`close()`, `close(true)` to stop at once, events).
 */
export function createQueueConsumer(options: QueueConsumerOptions, run: (job: QueueJob, token?: string) => Promise<void>): Worker<InferJobPayload> {
  const connection = options.connection ?? createRedisConnection(requireUrl(options.url), 'consumer');
  // BullMQ checks its options' types: pass only the ones given.
  const tuning = {
    ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
    ...(options.lockDurationMs !== undefined && { lockDuration: options.lockDurationMs }),
    ...(options.stalledIntervalMs !== undefined && { stalledInterval: options.stalledIntervalMs }),
    ...(options.maxStalledCount !== undefined && { maxStalledCount: options.maxStalledCount }),
  };
  const worker = new Worker<InferJobPayload>(queueNameFor(options.model), run, { connection, prefix: options.prefix, skipVersionCheck: true, ...tuning });
  if (!options.connection) worker.on('closed', () => connection.disconnect());
  return worker;
}

function requireUrl(url: string | undefined): string {
  if (url === undefined) throw new TypeError('createQueueConsumer needs a connection or a url');
  return url;
}

/**
 * From inside the consumer's `run`: puts the held job back in its queue at its
 * priority without counting an attempt (a fault of this worker's, not the
 * job's), for any worker to take. Never returns: BullMQ reads the error it
 * throws as "moved, not failed".
 */
export async function returnToQueue(job: QueueJob, token: string | undefined): Promise<never> {
  await job.moveToWait(token);
  throw new WaitingError();
}
