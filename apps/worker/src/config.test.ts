import { describe, expect, it } from 'vitest';
import { loadConfig } from '@inferq/core';
import { workerConfig } from './config.ts';

const base = { DATABASE_URL: 'postgres://x', REDIS_URL: 'redis://x' };

describe('worker config: warm models', () => {
  it('defaults to warm-up on, no idle unload, no budget, no preload', () => {
    expect(loadConfig(workerConfig, base)).toMatchObject({ MODEL_WARMUP: true, MODEL_IDLE_UNLOAD_S: 0, MODEL_MEMORY_BUDGET_MB: 0, WORKER_PRELOAD_MODELS: '' });
  });

  it('reads the settings', () => {
    expect(
      loadConfig(workerConfig, {
        ...base,
        MODEL_WARMUP: 'false',
        MODEL_IDLE_UNLOAD_S: '300',
        MODEL_MEMORY_BUDGET_MB: '4096',
        WORKER_PRELOAD_MODELS: 'mlp,resnet-50:3',
      }),
    ).toMatchObject({ MODEL_WARMUP: false, MODEL_IDLE_UNLOAD_S: 300, MODEL_MEMORY_BUDGET_MB: 4096, WORKER_PRELOAD_MODELS: 'mlp,resnet-50:3' });
  });

  it('rejects bad values', () => {
    expect(() => loadConfig(workerConfig, { ...base, MODEL_IDLE_UNLOAD_S: '-1' })).toThrow(/MODEL_IDLE_UNLOAD_S/);
    expect(() => loadConfig(workerConfig, { ...base, MODEL_MEMORY_BUDGET_MB: 'lots' })).toThrow(/MODEL_MEMORY_BUDGET_MB/);
    expect(() => loadConfig(workerConfig, { ...base, WORKER_PRELOAD_MODELS: 'mlp:latest' })).toThrow(/WORKER_PRELOAD_MODELS/);
    expect(() => loadConfig(workerConfig, { ...base, WORKER_PRELOAD_MODELS: 'mlp,,x' })).toThrow(/WORKER_PRELOAD_MODELS/);
  });
});

describe('worker config: batches in flight', () => {
  it('is 2 by default, a number from 1 to 16, or auto', () => {
    expect(loadConfig(workerConfig, base).WORKER_BATCHES_IN_FLIGHT).toBe(2);
    expect(loadConfig(workerConfig, { ...base, WORKER_BATCHES_IN_FLIGHT: '8' }).WORKER_BATCHES_IN_FLIGHT).toBe(8);
    expect(loadConfig(workerConfig, { ...base, WORKER_BATCHES_IN_FLIGHT: 'auto' }).WORKER_BATCHES_IN_FLIGHT).toBe('auto');
    expect(() => loadConfig(workerConfig, { ...base, WORKER_BATCHES_IN_FLIGHT: '17' })).toThrow(/WORKER_BATCHES_IN_FLIGHT/);
    expect(() => loadConfig(workerConfig, { ...base, WORKER_BATCHES_IN_FLIGHT: 'many' })).toThrow(/WORKER_BATCHES_IN_FLIGHT/);
  });
});

describe('worker config: feeder threads', () => {
  it('is 1 by default (no thread), an integer from 1 to 16', () => {
    expect(loadConfig(workerConfig, base).WORKER_FEEDERS).toBe(1);
    expect(loadConfig(workerConfig, { ...base, WORKER_FEEDERS: '4' }).WORKER_FEEDERS).toBe(4);
    expect(loadConfig(workerConfig, { ...base, WORKER_FEEDERS: '16' }).WORKER_FEEDERS).toBe(16);
    for (const bad of ['0', '17', 'auto']) expect(() => loadConfig(workerConfig, { ...base, WORKER_FEEDERS: bad })).toThrow(/WORKER_FEEDERS/);
  });
});
