export * from './pool.ts';
export * from './migrate.ts';
export * from './api-keys.ts';
export * from './models.ts';
export * from './jobs.ts';
export * from './job-runs.ts';
export * from './job-stats.ts';
export * from './webhook-deliveries.ts';
