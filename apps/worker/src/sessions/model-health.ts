import type { Logger } from '@inferq/core';

/** A model this worker stopped taking jobs for, after a fault of its own. */
export interface ModelFault {
  model: string;
  version: number;
  code: string;
  message: string;
  since: string;
  /** When the worker next tries to load the model again. */
  retryAt: string;
}

export interface ModelHealthDeps {
  logger: Logger;
  /** Stop and restart taking the model's jobs (its queue consumer on this worker). */
  pause(model: string): Promise<void>;
  resume(model: string): Promise<void>;
  /** Loads the model (download, check, session); rejects while the fault lasts. */
  probe(model: string, version: number): Promise<void>;
  /** Told on every change: faulted or recovered. */
  onChange?(model: string, faulted: boolean): void;
  /** @default 1000 */
  minBackoffMs?: number;
  /** @default 30000 */
  maxBackoffMs?: number;
}

/**
 * The worker's own health per model. A fault of the worker's (not the job's)
 * pauses the model's consumer here, so the other workers take its jobs; the
 * model is loaded again after a backoff that doubles up to 30 s, and the
 * consumer resumes once a load succeeds: the worker recovers by itself when
 * the cause is gone.
 */
export function createModelHealth(deps: ModelHealthDeps) {
  const minMs = deps.minBackoffMs ?? 1_000;
  const maxMs = deps.maxBackoffMs ?? 30_000;
  const faults = new Map<string, { fault: ModelFault; backoffMs: number; timer?: NodeJS.Timeout }>();
  let closed = false;

  function schedule(model: string): void {
    const state = faults.get(model);
    if (!state || closed) return;
    state.fault.retryAt = new Date(Date.now() + state.backoffMs).toISOString();
    state.timer = setTimeout(() => void retry(model), state.backoffMs);
  }

  async function retry(model: string): Promise<void> {
    const state = faults.get(model);
    if (!state || closed) return;
    try {
      await deps.probe(model, state.fault.version);
    } catch (err) {
      state.fault.message = (err as Error).message;
      state.backoffMs = Math.min(state.backoffMs * 2, maxMs);
      deps.logger.warn({ model, err: state.fault.message, retryInMs: state.backoffMs }, 'model still cannot load on this worker');
      schedule(model);
      return;
    }
    faults.delete(model);
    await deps.resume(model);
    deps.onChange?.(model, false);
    deps.logger.info({ model, faultedSince: state.fault.since }, 'model loads again on this worker; taking its jobs');
  }

  return {
    /** Records a fault of this worker's for the model; the first one pauses it and starts the retries. */
    async fault(model: string, version: number, code: string, message: string): Promise<void> {
      if (faults.has(model) || closed) return;
      const now = new Date().toISOString();
      faults.set(model, { fault: { model, version, code, message, since: now, retryAt: now }, backoffMs: minMs });
      deps.logger.error({ model, modelVersion: version, code, err: message }, 'worker fault: not taking this model until it loads here again');
      await deps.pause(model);
      deps.onChange?.(model, true);
      schedule(model);
    },
    isFaulted: (model: string): boolean => faults.has(model),
    faults: (): ModelFault[] => [...faults.values()].map((s) => ({ ...s.fault })),
    close(): void {
      closed = true;
      for (const s of faults.values()) clearTimeout(s.timer);
    },
  };
}
export type ModelHealth = ReturnType<typeof createModelHealth>;
