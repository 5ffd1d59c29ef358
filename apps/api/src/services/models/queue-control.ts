import { AuditAction, type ModelQueue } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import { insertAuditEntries, listModelVersions, recordModelQueuePause, type Pool } from '@inferq/db';
import { listWorkerStatuses, type JobProducer, type RedisClient } from '@inferq/queue';
import { auditEntry, type AuditActor } from '../keys/audit-service.ts';

export interface QueueControl {
  /** Stops workers starting the model's jobs; submissions are still accepted and kept. Idempotent; audited when it changes the state. */
  pause(name: string, actor: AuditActor): Promise<ModelQueue>;
  /** Lets workers start the model's jobs again. Idempotent; audited when it changes the state. */
  resume(name: string, actor: AuditActor): Promise<ModelQueue>;
  /** The model's queue now: depth, live workers, paused or not. */
  read(name: string): Promise<ModelQueue>;
}

const queueUnavailable = (err: unknown) =>
  new AppError('QUEUE_UNAVAILABLE', 'the queue cannot be reached; retry shortly', { cause: err, headers: { 'retry-after': '2' } });

/**
 * An operator's pause and resume of a model's queue. Workers obey BullMQ's
 * own flag (a global pause: workers stop fetching, jobs stay where they
 * wait); Postgres keeps the record of it (`model_queue_pauses`), written
 * first, from which the worker's reconciler puts the flag back when Redis
 * loses it or a write here reached Postgres but not Redis.
 */
export function createQueueControl(deps: { pool: Pool; producer: JobProducer; redis: RedisClient }): QueueControl {
  async function requireModel(name: string): Promise<void> {
    if ((await listModelVersions(deps.pool, name)).length === 0) throw new AppError('MODEL_NOT_FOUND', `model "${name}" is not registered`);
  }

  async function read(name: string): Promise<ModelQueue> {
    try {
      const [depth, workers] = await Promise.all([deps.producer.readDepth(name), listWorkerStatuses(deps.redis, deps.producer.prefix)]);
      return { ...depth, workers: workers.filter((w) => w.modelsServed.includes(name)).length };
    } catch (err) {
      throw queueUnavailable(err);
    }
  }

  async function setPaused(name: string, paused: boolean, actor: AuditActor): Promise<ModelQueue> {
    await requireModel(name);
    const recorded = await recordModelQueuePause(deps.pool, name, paused);
    let inRedis: boolean | undefined;
    let unreachable: unknown;
    try {
      inRedis = await deps.producer.isPaused(name);
      if (inRedis !== paused) await (paused ? deps.producer.pause(name) : deps.producer.resume(name));
    } catch (err) {
      unreachable = err;
    }
    // A model with no record yet: its state was Redis's (a pause made before the record existed).
    const before = recorded ?? inRedis;
    if (before !== undefined && before !== paused) {
      await insertAuditEntries(deps.pool, [auditEntry(actor, paused ? AuditAction.ModelPaused : AuditAction.ModelResumed, `models/${name}`, {})]);
    }
    // Recorded: the reconciler sets the flag once Redis answers, and a retry of this call is idempotent.
    if (unreachable !== undefined) throw queueUnavailable(unreachable);
    return read(name);
  }

  return {
    pause: (name, actor) => setPaused(name, true, actor),
    resume: (name, actor) => setPaused(name, false, actor),
    async read(name) {
      await requireModel(name);
      return read(name);
    },
  };
}
