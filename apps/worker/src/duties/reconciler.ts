import type { Logger } from '@inferq/core';
import { findUnfinishedJobs, listLatestModels, listModelQueuePauses, readJobInputs, type Pool, type UnfinishedJob } from '@inferq/db';
import { claimQueueEpochs, enqueueRequestFor, type JobProducer, type RedisClient } from '@inferq/queue';

const PAGE_SIZE = 1_000;
/** The incremental window reaches this far behind the last pass, for clock skew between worker and database. */
const SKEW_MARGIN_MS = 5_000;
/** How far before an outage a failover may have lost acknowledged writes: replication lag, with a wide margin. */
const FAILOVER_LOOKBACK_MS = 60_000;

/**
 * Postgres is the record of jobs (invariant 1): a queued or running row with
 * no queue job is enqueued again. Two ways a row loses its queue job:
 * - a crash between insert and enqueue: each pass checks the jobs created
 *   since the previous pass, once they are `minAgeMs` old, so the cost follows
 *   the submission rate, not the backlog;
 * - Redis losing its data (flush, restart without persistence, a Cluster
 *   shard that lost its data): a model queue's epoch key is gone, and that
 *   pass checks every unfinished job;
 * - a failover to a replica that missed the last acknowledged writes: the
 *   worker runs `reconcileAfterOutage` as soon as the new primary takes writes.
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

  /** Every unfinished job created after `createdAfter` (all with none) and at least `minAgeMs` old, checked and re-enqueued. */
  async function checkJobs(minAgeMs: number, createdAfter: Date | undefined): Promise<{ checked: number; requeued: number }> {
    let checked = 0;
    let requeued = 0;
    let after: UnfinishedJob | undefined;
    for (;;) {
      const rows = await findUnfinishedJobs(deps.pool, { minAgeMs, createdAfter, after, limit: PAGE_SIZE });
      checked += rows.length;
      requeued += await requeueMissing(rows);
      if (rows.length < PAGE_SIZE) break;
      after = rows[rows.length - 1];
    }
    return { checked, requeued };
  }

  return {
    async reconcileOnce(): Promise<{ full: boolean; checked: number; requeued: number }> {
      const passStart = Date.now();
      await restorePauses();
      const models = (await listLatestModels(deps.pool)).map((m) => m.name);
      const lost = await claimQueueEpochs(deps.redis, deps.producer.prefix, models);
      const full = lost.length > 0 || checkedUpTo === undefined;
      const createdAfter = full ? undefined : new Date(checkedUpTo!.getTime() - SKEW_MARGIN_MS);
      const { checked, requeued } = await checkJobs(deps.minAgeMs, createdAfter);
      checkedUpTo = new Date(passStart - deps.minAgeMs);
      if (requeued > 0) deps.logger.warn({ full, lostQueues: lost, checked, requeued }, 'reconciler re-enqueued jobs missing from the queue');
      return { full, checked, requeued };
    },

    /**
     * The pass run as soon as a new primary takes writes after an outage: a replica promoted in a failover may have
     * missed the last writes its old primary acknowledged (replication is asynchronous), so every unfinished job
     * created from FAILOVER_LOOKBACK_MS before the outage on is checked now, whatever its age, instead of waiting out
     * RECONCILE_MIN_AGE_MS and the next pass. A job whose submit is still enqueueing it is added once (its id).
     */
    async reconcileAfterOutage(downSinceMs: number): Promise<{ checked: number; requeued: number }> {
      await restorePauses();
      const result = await checkJobs(0, new Date(downSinceMs - FAILOVER_LOOKBACK_MS));
      deps.logger.info({ ...result, afterOutageMs: Date.now() - downSinceMs }, 'reconciler checked the jobs a failover may have lost');
      return result;
    },
  };
}
