import { AuditAction, type ModelQueue } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import { insertAuditEntries, listModelVersions, type Pool } from '@inferq/db';
import { listWorkerStatuses, readQueueDepth, type JobProducer, type RedisClient } from '@inferq/queue';
import { auditEntry, type AuditActor } from './audit-service.ts';

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
 * An operator's pause and resume of a model's queue. The paused flag is
 * BullMQ's own (a global pause: workers stop fetching, jobs stay where they
 * wait), so every API and worker process reads the one record of it.
 */
export function createQueueControl(deps: { pool: Pool; producer: JobProducer; redis: RedisClient }): QueueControl {
  async function requireModel(name: string): Promise<void> {
    if ((await listModelVersions(deps.pool, name)).length === 0) throw new AppError('MODEL_NOT_FOUND', `model "${name}" is not registered`);
  }

  async function read(name: string): Promise<ModelQueue> {
    try {
      const [depth, workers] = await Promise.all([
        readQueueDepth(deps.redis, deps.producer.queueFor(name), name),
        listWorkerStatuses(deps.redis, deps.producer.prefix),
      ]);
      return { ...depth, workers: workers.filter((w) => w.modelsServed.includes(name)).length };
    } catch (err) {
      throw queueUnavailable(err);
    }
  }

  async function setPaused(name: string, paused: boolean, actor: AuditActor): Promise<ModelQueue> {
    await requireModel(name);
    let changed: boolean;
    try {
      changed = (await deps.producer.isPaused(name)) !== paused;
      if (changed) await (paused ? deps.producer.pause(name) : deps.producer.resume(name));
    } catch (err) {
      throw queueUnavailable(err);
    }
    if (changed) {
      await insertAuditEntries(deps.pool, [auditEntry(actor, paused ? AuditAction.ModelPaused : AuditAction.ModelResumed, `models/${name}`, {})]);
    }
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
