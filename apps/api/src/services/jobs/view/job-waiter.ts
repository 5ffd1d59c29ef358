import { isTerminalStatus } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import type { JobRecord } from '@inferq/db';
import { listServedModels, type JobEvents, type RedisClient } from '@inferq/queue';

/** How long a set of models with a live worker is trusted; a model missing from it is looked up again at once. */
const SERVED_TTL_MS = 500;

export interface JobWaiter {
  /** The model's name, when a live worker serves it; else MODEL_UNAVAILABLE (`consequence` is added to its detail). */
  requireServed(modelRef: string, consequence?: string): Promise<string>;
  /**
   * Fails fast with MODEL_UNAVAILABLE when no live worker serves the model
   * (nothing would end the wait), else subscribes to the model's job ends.
   * Call it before submitting.
   */
  prepare(modelRef: string): Promise<void>;
  /** The job once it has finished, or as it is when `timeoutMs` has passed. */
  waitForJob(id: string, ownerKeyId: string | null, timeoutMs: number): Promise<JobRecord>;
}

/** `Prefer: wait=N`: one round trip for callers that want the result, bounded by N. */
export interface JobWaiterDeps {
  redis: RedisClient;
  prefix: string;
  events: JobEvents;
  getJob(id: string, ownerKeyId: string | null): Promise<JobRecord>;
  /** `name` or `name:version` to the model's name (MODEL_NOT_FOUND when unknown). */
  resolveModelName(ref: string): Promise<string>;
}

export function createJobWaiter(deps: JobWaiterDeps): JobWaiter {
  let served: { models: Set<string>; readAtMs: number } | undefined;
  async function isServed(model: string): Promise<boolean> {
    if (served && served.models.has(model) && Date.now() - served.readAtMs <= SERVED_TTL_MS) return true;
    const models = await listServedModels(deps.redis, deps.prefix).catch((err: unknown) => {
      throw new AppError('QUEUE_UNAVAILABLE', 'the queue cannot be reached; retry shortly', { cause: err, headers: { 'retry-after': '2' } });
    });
    served = { models, readAtMs: Date.now() };
    return served.models.has(model);
  }

  async function requireServed(ref: string, consequence = ''): Promise<string> {
    const model = await deps.resolveModelName(ref);
    if (!(await isServed(model))) {
      throw new AppError('MODEL_UNAVAILABLE', `no live worker serves model "${model}"${consequence}`, { headers: { 'retry-after': '5' } });
    }
    return model;
  }

  return {
    requireServed,
    async prepare(ref) {
      await deps.events.listen(await requireServed(ref, '; the job was not submitted'));
    },
    async waitForJob(id, ownerKeyId, timeoutMs) {
      const until = Date.now() + timeoutMs;
      const watch = deps.events.watch(id);
      try {
        for (;;) {
          const job = await deps.getJob(id, ownerKeyId);
          const left = until - Date.now();
          if (isTerminalStatus(job.status) || left <= 0) return job;
          await watch.wait(left);
        }
      } finally {
        watch.stop();
      }
    },
  };
}
