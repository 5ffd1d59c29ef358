export * from './test-context.ts';
export * from './wait-for.ts';
export * from './processes.ts';
export * from './test-env.ts';
export * from './stack.ts';
