import { findModel, type Pool } from '@inferq/db';
import type { Logger } from '@inferq/core';
import { AppError } from '@inferq/core';
import type { WorkerStatus } from '@inferq/contracts';
import { openModelSession, type ModelSession } from '@inferq/inference';
import type { ModelCache } from './model-cache.ts';
import type { WorkerMetrics } from './worker-metrics.ts';

export interface SessionSettings {
  device: string;
  providers: string[] | undefined;
  intraOpNumThreads: number;
  interOpNumThreads: number;
}

/**
 * One onnxruntime session per model version, loaded on first use and kept
 * warm. A failed load is not cached, so a later batch tries again.
 */
export function createModelSessions(deps: { pool: Pool; cache: ModelCache; settings: SessionSettings; logger: Logger; metrics?: Pick<WorkerMetrics, 'modelLoaded'> }) {
  const sessions = new Map<string, Promise<ModelSession>>();
  const loadedModels = new Map<string, WorkerStatus['modelsLoaded'][number]>();

  async function load(model: string, version: number): Promise<ModelSession> {
    const loadStarted = performance.now();
    const record = await findModel(deps.pool, model, version);
    if (!record) throw new AppError('MODEL_NOT_FOUND', `model ${model}:${version} is not registered`);
    const path = await deps.cache.ensureModelFile({ sha256: record.sha256, artifactKey: record.artifactKey });
    const started = performance.now();
    const { device, providers, intraOpNumThreads, interOpNumThreads } = deps.settings;
    const session = await openModelSession({
      modelPath: path, device, providers,
      intraOpNumThreads: intraOpNumThreads || undefined, interOpNumThreads: interOpNumThreads || undefined,
    });
    deps.logger.info({ model, modelVersion: version, provider: session.provider, failedProviders: session.failedProviders, loadMs: Math.round(performance.now() - started) }, 'model loaded');
    loadedModels.set(`${model}:${version}`, { model, version, provider: session.provider, loadedAt: new Date().toISOString() });
    deps.metrics?.modelLoaded(model, (performance.now() - loadStarted) / 1000);
    return session;
  }

  return {
    getSession(model: string, version: number): Promise<ModelSession> {
      const key = `${model}:${version}`;
      let session = sessions.get(key);
      if (!session) {
        session = load(model, version);
        sessions.set(key, session);
        session.catch(() => sessions.delete(key));
      }
      return session;
    },
    /**
     * Forgets a session whose thread died (runBatch rejected), so the next
     * batch loads the model afresh instead of failing on a dead thread.
     */
    async discard(model: string, version: number, session: ModelSession): Promise<void> {
      const key = `${model}:${version}`;
      if (await sessions.get(key)?.catch(() => undefined) !== session) return;
      sessions.delete(key);
      loadedModels.delete(key);
      deps.logger.warn({ model, modelVersion: version }, 'model session discarded after its thread failed');
      await session.close().catch(() => {});
    },
    /** Sessions that finished loading, with the provider each ended on. */
    loaded: () => [...loadedModels.values()],
    async closeAll(): Promise<void> {
      const all = [...sessions.values()];
      sessions.clear();
      loadedModels.clear();
      await Promise.all(all.map(async (s) => (await s.catch(() => undefined))?.close()));
    },
  };
}
export type ModelSessions = ReturnType<typeof createModelSessions>;
