import type { Logger } from '@inferq/core';
import type { ModelSessions } from './model-sessions.ts';

export interface PreloadSpec {
  model: string;
  /** Absent: the latest version. */
  version?: number;
}

/** `mlp,resnet:3` → specs; the config pattern has already checked the form. */
export function parsePreloadList(list: string): PreloadSpec[] {
  return list
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => {
      const [model, version] = s.split(':');
      return version === undefined ? { model: model! } : { model: model!, version: Number(version) };
    });
}

/**
 * Loads and warms the listed models one after another. A model that cannot
 * load is logged and left to load on its first job: a bad preload list never
 * keeps the worker from serving.
 */
export async function preloadModels(sessions: Pick<ModelSessions, 'preload'>, specs: readonly PreloadSpec[], logger: Logger): Promise<void> {
  for (const spec of specs) {
    try {
      const version = await sessions.preload(spec.model, spec.version);
      logger.info({ model: spec.model, modelVersion: version }, 'model preloaded');
    } catch (err) {
      logger.warn({ model: spec.model, modelVersion: spec.version, err: (err as Error).message }, 'model preload failed');
    }
  }
}
