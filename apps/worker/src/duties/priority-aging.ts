import type { Priority } from '@inferq/contracts';
import type { Logger } from '@inferq/core';
import { findAgedQueuedJobs, type Pool } from '@inferq/db';
import { takeLease, type JobProducer, type PromoteRequest, type RedisClient } from '@inferq/queue';

/** Each key's oldest jobs looked at per pass and model; one of them moves. */
const PER_KEY = 20;

/** The class a job waiting `ageMs` should be in: one class up per `agingMs` waited, never past high; batch stays. */
export function agedClass(submitted: Priority, ageMs: number, agingMs: number): Priority {
  if (submitted === 'batch') return 'batch';
  const steps = Math.floor(ageMs / agingMs);
  const order: Priority[] = ['low', 'normal', 'high'];
  return order[Math.min(2, order.indexOf(submitted) + steps)]!;
}

/**
 * Priority aging: a normal or low job moves up one class for every
 * `agingMs` it has waited, taking the fair position of its API key in the
 * new class (the class's front unless the key already has work waiting
 * there). Each pass moves at most one job per key and model, its oldest
 * still below its class: a key's aged backlog enters the class above one job
 * a pass, so it cannot crowd out other keys' work there, while every waiting
 * key keeps moving. So a key's oldest low job is among the high jobs at
 * most 2 × agingMs (normal: agingMs) plus a pass after it was submitted,
 * whatever stream of more urgent work keeps coming. Jobs are read from
 * Postgres (queued, each key's oldest first) and moved in Redis, one script
 * call per model; the row keeps the priority the job was submitted with.
 */
/** The name of the aging pass's lease. */
export const AGING_PASS = 'priority-aging';

export function createPriorityAger(deps: {
  pool: Pool;
  producer: JobProducer;
  connection: RedisClient;
  agingMs: number;
  logger: Logger;
  now?: () => number;
  /** Every worker runs the pass on a timer; the first to take this lease (in Redis, for this long) runs it, the others skip. 0: no lease. */
  passLeaseMs: number;
}) {
  const now = deps.now ?? Date.now;
  return {
    /** One pass; returns how many jobs moved up (0 when another worker holds this pass). */
    async run(): Promise<number> {
      if (deps.passLeaseMs > 0 && !(await takeLease(deps.connection, deps.producer.prefix, AGING_PASS, deps.passLeaseMs))) return 0;
      const candidates = await findAgedQueuedJobs(deps.pool, { olderThan: new Date(now() - deps.agingMs), perKey: PER_KEY });
      const byModel = new Map<string, PromoteRequest[]>();
      for (const job of candidates) {
        const target = agedClass(job.priority, now() - job.createdAt.getTime(), deps.agingMs);
        if (target === job.priority) continue;
        byModel.set(job.modelName, [...(byModel.get(job.modelName) ?? []), { id: job.id, tenant: job.ownerKeyId, target }]);
      }
      // Jobs a worker holds, in retry backoff, or already in their class are left where they are (the script checks).
      let moved = 0;
      for (const [model, jobs] of byModel) moved += await deps.producer.promoteJobs(model, jobs);
      if (moved > 0) deps.logger.info({ moved }, 'aged jobs moved up a priority class');
      return moved;
    },
  };
}
