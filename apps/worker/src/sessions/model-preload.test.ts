import { describe, expect, it, vi } from 'vitest';
import { createLogger } from '@inferq/core';
import { parsePreloadList, preloadModels } from './model-preload.ts';

describe('model preload', () => {
  it('parses `name` and `name:version`, comma-separated', () => {
    expect(parsePreloadList('')).toEqual([]);
    expect(parsePreloadList('mlp, resnet:3')).toEqual([{ model: 'mlp' }, { model: 'resnet', version: 3 }]);
  });

  it('goes on past a model that cannot load', async () => {
    const logger = createLogger({ service: 'test', level: 'silent' });
    const warn = vi.spyOn(logger, 'warn');
    const preload = vi.fn(async (model: string, version?: number) => {
      if (model === 'gone') throw new Error('not registered');
      return version ?? 7;
    });
    await preloadModels({ preload }, [{ model: 'gone' }, { model: 'mlp' }], logger);
    expect(preload).toHaveBeenCalledTimes(2);
    expect(warn).toHaveBeenCalledWith(expect.objectContaining({ model: 'gone' }), 'model preload failed');
  });
});
