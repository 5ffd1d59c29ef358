export * from './provide-services.ts';
export * from './postgres-server.ts';
export * from './redis-server.ts';
export * from './s3-server.ts';
export type { RunningService } from './running-service.ts';
export type { FindExecutable } from './find-executable.ts';
export { CHROMIUM, CURL, JQ, NGINX, PROMTOOL, resolveDebianBinary, type DebianBinary } from './debian-binary.ts';
export { createExecutableFinder } from './find-executable.ts';
