import type { Priority } from '@inferq/contracts';
import type { Logger } from '@inferq/core';
import { findAgedQueuedJobs, type Pool } from '@inferq/db';
import { assignFairPriorities, classRange, priorityOfBull, type JobProducer, type Redis } from '@inferq/queue';

/** Jobs looked at per pass, oldest first. */
const PASS_LIMIT = 500;

/** The class a job waiting `ageMs` should be in: one class up per `agingMs` waited, never past high. */
export function agedClass(submitted: Priority, ageMs: number, agingMs: number): Priority {
  const steps = Math.floor(ageMs / agingMs);
  const order: Priority[] = ['low', 'normal', 'high'];
  return order[Math.min(2, order.indexOf(submitted) + steps)]!;
}

/**
 * Priority aging: a normal or low job moves up one class for every
 * `agingMs` it has waited, taking the fair position of its API key in the
 * new class (the class's front unless the key already has work waiting
 * there). So no job waits behind a stream of more urgent work for more than
 * 2 × agingMs (low) or agingMs (normal) plus the pass interval before it is
 * among the high jobs. Jobs are read from Postgres (queued, oldest first) and
 * moved in Redis only when they are below their class; the row keeps the
 * priority the job was submitted with.
 */
export function createPriorityAger(deps: { pool: Pool; producer: JobProducer; connection: Redis; agingMs: number; logger: Logger; now?: () => number }) {
  const now = deps.now ?? Date.now;
  return {
    /** One pass; returns how many jobs moved up. */
    async run(): Promise<number> {
      const candidates = await findAgedQueuedJobs(deps.pool, { olderThan: new Date(now() - deps.agingMs), limit: PASS_LIMIT });
      let moved = 0;
      for (const job of candidates) {
        const target = agedClass(job.priority, now() - job.createdAt.getTime(), deps.agingMs);
        const queue = deps.producer.queueFor(job.modelName);
        const queued = await queue.getJob(job.id);
        // Held by a worker, in retry backoff, or not in Redis (the reconciler will re-add it): nothing to move.
        if (!queued || (await queued.getState()) !== 'prioritized') continue;
        if (classRange(priorityOfBull(queued.priority)).min <= classRange(target).min) continue;
        const [priority] = await assignFairPriorities(deps.connection, queue, [{ tenant: job.ownerKeyId, priority: target }]);
        await queued.changePriority({ priority: priority! });
        moved++;
      }
      if (moved > 0) deps.logger.info({ moved }, 'aged jobs moved up a priority class');
      return moved;
    },
  };
}
