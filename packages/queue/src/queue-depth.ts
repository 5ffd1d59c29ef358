import type { Queue } from 'bullmq';
import type { QueueDepth } from '@inferq/contracts';
import { BULL_PRIORITY } from './names.ts';

/** A model queue's jobs right now: waiting ones per priority, held ones, and those in retry backoff. */
export async function readQueueDepth(queue: Queue, model: string): Promise<Omit<QueueDepth, 'workers'>> {
  const [perPriority, counts] = await Promise.all([
    queue.getCountsPerPriority([BULL_PRIORITY.high, BULL_PRIORITY.normal, BULL_PRIORITY.low]),
    queue.getJobCounts('active', 'delayed'),
  ]);
  return {
    model,
    high: perPriority[String(BULL_PRIORITY.high)] ?? 0,
    normal: perPriority[String(BULL_PRIORITY.normal)] ?? 0,
    low: perPriority[String(BULL_PRIORITY.low)] ?? 0,
    active: counts.active ?? 0,
    delayed: counts.delayed ?? 0,
  };
}
