import { describe, expect, it } from 'vitest';
import { parseLsn } from './postgres-activity.ts';
import { predictThroughput, type Tier } from './tier-costs.ts';

const none: Record<Tier, number | null> = {
  api: null,
  worker: null,
  'worker main': null,
  'worker session': null,
  'worker other': null,
  redis: null,
  postgres: null,
  'load generator': null,
};

describe('predictThroughput', () => {
  it('gives the lowest tier, each on its own cores', () => {
    const us = { ...none, api: 100, worker: 300, 'worker main': 40, 'worker session': 250, 'worker other': 10, redis: 50, postgres: 80 };
    expect(predictThroughput(us, { api: 2, workers: 1, sessionCores: 1 })).toEqual({ tier: 'worker session', jobsPerS: 4000 });
    expect(predictThroughput(us, { api: 2, workers: 1, sessionCores: 4 })).toEqual({ tier: 'postgres', jobsPerS: 12500 });
  });

  it('uses the whole worker when its threads were not split, and skips tiers not measured', () => {
    expect(predictThroughput({ ...none, worker: 500, redis: 20 }, { api: 0, workers: 1, sessionCores: 2 })).toEqual({ tier: 'worker', jobsPerS: 4000 });
    expect(predictThroughput(none, { api: 1, workers: 1, sessionCores: 1 })).toBeNull();
  });
});

describe('parseLsn', () => {
  it('reads a WAL location as bytes', () => {
    expect(parseLsn('0/10') - parseLsn('0/0')).toBe(16n);
    expect(parseLsn('1/0')).toBe(2n ** 32n);
  });
});
