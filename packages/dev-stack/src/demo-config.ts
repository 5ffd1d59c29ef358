// The demo's own settings. Everything else in the environment passes through
// unchanged to the API and worker, whose config loaders read it.

export interface DemoConfig {
  /** The environment the demo was started with. */
  env: NodeJS.ProcessEnv;
  port: string;
  workerLogLevel: string;
  workerDevices: string;
}

export function loadDemoConfig(env: NodeJS.ProcessEnv = process.env): DemoConfig {
  return { env, port: env.PORT ?? '8080', workerLogLevel: env.LOG_LEVEL ?? 'warn', workerDevices: env.WORKER_DEVICES ?? 'cpu' };
}
