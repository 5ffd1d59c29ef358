import { defineConfig } from 'vitest/config';

const GLOBAL_SETUP = 'packages/test-utils/src/global-setup.ts';

/**
 * Files that run again on a real Redis Cluster (3 primaries, 3 replicas) and a
 * Sentinel group (primary, replica, 3 Sentinels): the pipeline, the fault and
 * recovery paths, every Lua script and multi-key command (fair ordering, aging,
 * rate limits, registry, events, pause) and the fuzz. A CROSSSLOT error fails them.
 */
const ON_EVERY_TOPOLOGY = [
  'apps/worker/tests/pipeline-end-to-end.test.ts',
  'apps/worker/tests/worker-crash.test.ts',
  'apps/worker/tests/reconciler.test.ts',
  'apps/worker/tests/group-entries.test.ts',
  'apps/worker/tests/model-pause.test.ts',
  'apps/worker/src/duties/fair-scheduling.test.ts',
  'apps/api/tests/fuzz.test.ts',
  'apps/api/tests/system.test.ts',
  'apps/api/tests/model-pause.test.ts',
  'apps/api/tests/deadlines-and-limits.test.ts',
  'apps/api/tests/job-events-stream.test.ts',
  'apps/api/tests/key-weights.test.ts',
  'apps/api/tests/tenants.test.ts',
  'packages/queue/tests/request-counter.test.ts',
  'packages/queue/tests/carried-inputs.test.ts',
  'packages/queue/tests/queue-groups.test.ts',
];

const onTopology = (topology: 'cluster' | 'sentinel') => ({
  extends: true as const,
  test: {
    name: `redis-${topology}`,
    include: ON_EVERY_TOPOLOGY,
    env: { INFERQ_TEST_REDIS: topology },
    globalSetup: [GLOBAL_SETUP, 'packages/test-utils/src/redis-topology-setup.ts'],
  },
});

export default defineConfig({
  test: {
    globalSetup: [GLOBAL_SETUP],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.inferq/test-results.json' }]] : ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'inferq',
          include: [
            'apps/*/src/**/*.test.ts',
            'apps/web/src/**/*.test.tsx',
            'apps/*/tests/**/*.test.ts',
            'packages/*/src/**/*.test.ts',
            'packages/*/tests/**/*.test.ts',
            'e2e/**/*.test.ts',
            'infrastructure/tests/**/*.test.ts',
          ],
        },
      },
      onTopology('cluster'),
      onTopology('sentinel'),
      // The images built and run as containers: `npm run test:images` (podman needed; .ci/run installs it).
      ...(process.env.INFERQ_TEST_IMAGES ? [{ extends: true as const, test: { name: 'images', include: ['infrastructure/images/**/*.test.ts'] } }] : []),
    ],
  },
});
