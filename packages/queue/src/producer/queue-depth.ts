import type { Queue } from 'bullmq';
import type { QueueDepth } from '@inferq/contracts';
import type { RedisClient } from '../connection/connection.ts';
import { countWaitingPerClass, PRIORITY_CLASSES } from './fair-priority.ts';
import { heldGroupExtras, waitingGroupExtras } from './queue-groups.ts';

/**
 * A model queue's jobs right now: waiting ones per priority (a paused queue
 * keeps its jobs there), held ones, those in retry backoff, and whether it is
 * paused; each member of a group entry counted. The producer's `readDepth`.
 */
export async function readQueueDepth(connection: RedisClient, queue: Queue, model: string): Promise<Omit<QueueDepth, 'workers'>> {
  const [perClass, extras, heldExtras, counts, paused] = await Promise.all([
    countWaitingPerClass(connection, queue),
    waitingGroupExtras(connection, queue),
    heldGroupExtras(connection, queue),
    queue.getJobCounts('active', 'delayed'),
    queue.isPaused(),
  ]);
  return {
    model,
    // A class with no entry waiting has no member waiting: a count left over (an add that failed after it) shows nowhere.
    ...(Object.fromEntries(PRIORITY_CLASSES.map((p) => [p, perClass[p] + (perClass[p] > 0 ? extras[p] : 0)])) as typeof perClass),
    active: (counts.active ?? 0) + ((counts.active ?? 0) > 0 ? heldExtras : 0),
    delayed: counts.delayed ?? 0,
    paused,
  };
}
