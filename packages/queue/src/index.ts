export * from './connection.ts';
export * from './names.ts';
export * from './job-options.ts';
export * from './job-producer.ts';
export { Worker as QueueWorker, UnrecoverableError, type Job as QueueJob } from 'bullmq';
export * from './worker-registry.ts';
export * from './queue-depth.ts';
export * from './queue-epoch.ts';
export * from './job-events.ts';
