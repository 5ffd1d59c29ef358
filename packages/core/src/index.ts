export * from './app-error.ts';
export * from './config.ts';
export * from './logger.ts';
export * from './periodic-task.ts';
export * from './shutdown.ts';
export * from './tracing.ts';
export * from './process-heap.ts';
export * from './scrape-reads.ts';
