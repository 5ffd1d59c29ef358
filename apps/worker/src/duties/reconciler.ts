import type { Logger } from '@inferq/core';
import { findUnfinishedJobs, listLatestModels, listModelQueuePauses, readJobInputs, type Pool, type UnfinishedJob } from '@inferq/db';
import { claimQueueEpochs, enqueueRequestFor, type JobProducer, type RedisClient } from '@inferq/queue';

const PAGE_SIZE = 1_000;
/** The incremental window reaches this far behind the last pass, for clock skew between worker and database. */
const SKEW_MARGIN_MS = 5_000;

/**
 * Postgres is the record of jobs (invariant 1): a queued or running row with
 * no queue job is enqueued again. Two ways a row loses its queue job:
 * - a crash between insert and enqueue: each pass checks the jobs created
 *   since the previous pass, once they are `minAgeMs` old, so the cost follows
 *   the submission rate, not the backlog;
 * - Redis losing its data (flush, restart without persistence, a Cluster
 *   shard that lost its data): a model queue's epoch key is gone, and that
 *   pass checks every unfinished job.
 * Queue job ids are the job ids, so a job already queued is never added twice,
 * and workers skip rows that finished meanwhile.
 *
 * An operator's pause is recorded in Postgres too: each pass first sets
 * BullMQ's flag to the record where they differ (Redis lost it, or the API's
 * write reached Postgres and not Redis), before any job is enqueued again.
 */
export function createReconciler(deps: { pool: Pool; producer: JobProducer; redis: RedisClient; minAgeMs: number; logger: Logger }) {
  let checkedUpTo: Date | undefined;

  async function requeueMissing(rows: UnfinishedJob[]): Promise<number> {
    const byModel = new Map<string, UnfinishedJob[]>();
    for (const r of rows) {
      const jobs = byModel.get(r.modelName) ?? [];
      jobs.push(r);
      byModel.set(r.modelName, jobs);
    }
    let requeued = 0;
    for (const [model, jobs] of byModel) {
      const queued = await deps.producer.findQueuedIds(
        model,
        jobs.map((j) => j.id),
      );
      const missing = jobs.filter((j) => !queued.has(j.id));
      if (missing.length === 0) continue;
      const inputs = await readJobInputs(
        deps.pool,
        missing.map((j) => j.id),
      );
      const requests = missing.flatMap((j) => {
        const tensors = inputs.get(j.id);
        if (!tensors) return []; // deleted meanwhile
        return [enqueueRequestFor(j, tensors)];
      });
      await deps.producer.enqueueJobs(requests);
      requeued += requests.length;
    }
    return requeued;
  }

  async function restorePauses(): Promise<string[]> {
    const restored: string[] = [];
    for (const [model, paused] of await listModelQueuePauses(deps.pool)) {
      if ((await deps.producer.isPaused(model)) === paused) continue;
      await (paused ? deps.producer.pause(model) : deps.producer.resume(model));
      restored.push(model);
    }
    if (restored.length > 0) deps.logger.warn({ models: restored }, 'reconciler set model queues paused or resumed as Postgres records them');
    return restored;
  }

  return {
    async reconcileOnce(): Promise<{ full: boolean; checked: number; requeued: number }> {
      const passStart = Date.now();
      await restorePauses();
      const models = (await listLatestModels(deps.pool)).map((m) => m.name);
      const lost = await claimQueueEpochs(deps.redis, deps.producer.prefix, models);
      const full = lost.length > 0 || checkedUpTo === undefined;
      const createdAfter = full ? undefined : new Date(checkedUpTo!.getTime() - SKEW_MARGIN_MS);
      let checked = 0;
      let requeued = 0;
      let after: UnfinishedJob | undefined;
      for (;;) {
        const rows = await findUnfinishedJobs(deps.pool, { minAgeMs: deps.minAgeMs, createdAfter, after, limit: PAGE_SIZE });
        checked += rows.length;
        requeued += await requeueMissing(rows);
        if (rows.length < PAGE_SIZE) break;
        after = rows[rows.length - 1];
      }
      checkedUpTo = new Date(passStart - deps.minAgeMs);
      if (requeued > 0) deps.logger.warn({ full, lostQueues: lost, checked, requeued }, 'reconciler re-enqueued jobs missing from the queue');
      return { full, checked, requeued };
    },
  };
}
