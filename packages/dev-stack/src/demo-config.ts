// The demo's own settings. Everything else in the environment passes through
// unchanged to the API and worker, whose config loaders read it.
import { resolve } from 'node:path';

export interface DemoConfig {
  /** The environment the demo was started with. */
  env: NodeJS.ProcessEnv;
  port: string;
  workerLogLevel: string;
  workerDevices: string;
  /** Where the demo keeps its services' data and admin key. */
  dataDir: string;
}

export function loadDemoConfig(root: string, env: NodeJS.ProcessEnv = process.env): DemoConfig {
  return {
    env,
    port: env.PORT ?? '8080',
    workerLogLevel: env.LOG_LEVEL ?? 'warn',
    workerDevices: env.WORKER_DEVICES ?? 'cpu',
    dataDir: resolve(root, env.INFERQ_DEMO_DIR || '.inferq/demo'),
  };
}
