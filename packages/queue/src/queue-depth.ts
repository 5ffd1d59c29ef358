import type { Queue } from 'bullmq';
import type { QueueDepth } from '@inferq/contracts';
import type { RedisClient } from './connection.ts';
import { countWaitingPerClass } from './fair-priority.ts';

/**
 * A model queue's jobs right now: waiting ones per priority (a paused queue
 * keeps its jobs there), held ones, those in retry backoff, and whether it is paused.
 */
export async function readQueueDepth(connection: RedisClient, queue: Queue, model: string): Promise<Omit<QueueDepth, 'workers'>> {
  const [perClass, counts, paused] = await Promise.all([countWaitingPerClass(connection, queue), queue.getJobCounts('active', 'delayed'), queue.isPaused()]);
  return {
    model,
    ...perClass,
    active: counts.active ?? 0,
    delayed: counts.delayed ?? 0,
    paused,
  };
}
