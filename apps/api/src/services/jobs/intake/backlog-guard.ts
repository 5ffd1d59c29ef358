import { AppError } from '@inferq/core';
import type { JobProducer } from '@inferq/queue';

export interface BacklogGuard {
  /**
   * Throws QUEUE_FULL when the model's backlog is at its limit; counts the job otherwise and answers the backlog it
   * was admitted at (undefined while Redis cannot tell).
   */
  admit(model: string): Promise<number | undefined>;
}

/**
 * Backpressure per model queue. The backlog is read from Redis at most once
 * per `refreshMs` per model and counted up locally between reads, so a submit
 * costs no extra round trip and a burst cannot overshoot the limit by more
 * than what other API replicas admit within one refresh. A refusal is always
 * decided on a fresh count. While Redis is
 * unreachable the guard lets submissions through to the enqueue, which
 * answers 503 QUEUE_UNAVAILABLE.
 */
export function createBacklogGuard(deps: { producer: JobProducer; maxDepth: number; refreshMs: number }): BacklogGuard {
  const known = new Map<string, { depth: number; readAtMs: number }>();
  const reads = new Map<string, Promise<{ depth: number; readAtMs: number }>>();

  function read(model: string) {
    let pending = reads.get(model);
    if (!pending) {
      pending = deps.producer
        .backlog(model)
        .then((depth) => {
          const entry = { depth, readAtMs: Date.now() };
          known.set(model, entry);
          return entry;
        })
        .finally(() => reads.delete(model));
      reads.set(model, pending);
    }
    return pending;
  }

  return {
    async admit(model) {
      const cached = known.get(model);
      let entry = cached && Date.now() - cached.readAtMs < deps.refreshMs ? cached : await read(model).catch(() => undefined);
      // Refuse only on a fresh count: the backlog may have drained since the cached one.
      if (entry && entry === cached && deps.maxDepth > 0 && entry.depth >= deps.maxDepth) entry = await read(model).catch(() => undefined);
      if (!entry) return undefined;
      if (deps.maxDepth > 0 && entry.depth >= deps.maxDepth) {
        throw new AppError('QUEUE_FULL', `model "${model}" has ${entry.depth} jobs waiting, its limit; retry later`, { headers: { 'retry-after': '1' } });
      }
      return entry.depth++;
    },
  };
}
