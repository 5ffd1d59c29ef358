import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'apps/*/src/**/*.test.ts',
      'apps/web/src/**/*.test.tsx',
      'apps/*/tests/**/*.test.ts',
      'packages/*/src/**/*.test.ts',
      'packages/*/tests/**/*.test.ts',
      'e2e/**/*.test.ts',
      'infrastructure/tests/**/*.test.ts',
    ],
    globalSetup: ['packages/test-utils/src/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.inferq/test-results.json' }]] : ['default'],
  },
});
