import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createLogger, loadConfig, processHeapNodeFlags } from '@inferq/core';
import { workerConfig } from './config.ts';

// One worker process per device, each pinned through WORKER_DEVICE (and, for
// CUDA, CUDA_VISIBLE_DEVICES left to the operator). A process that dies is restarted.
const config = loadConfig(workerConfig);
const logger = createLogger({ service: 'inferq-launcher', level: config.LOG_LEVEL });
const mainPath = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? './main.ts' : './main.js', import.meta.url));
const children = new Map<string, ChildProcess>();
let stopping = false;

function start(device: string, index: number, restarts = 0): void {
  // One metrics port per device process: METRICS_PORT, METRICS_PORT + 1, … (0 stays "any free port").
  const metricsPort = String(config.METRICS_PORT === 0 ? 0 : config.METRICS_PORT + index);
  const child = spawn(process.execPath, [...processHeapNodeFlags(config, process.execArgv), mainPath], {
    env: { ...process.env, WORKER_DEVICE: device, METRICS_PORT: metricsPort },
    stdio: 'inherit',
  });
  children.set(device, child);
  logger.info({ device, pid: child.pid }, 'worker process started');
  child.on('exit', (code, signal) => {
    children.delete(device);
    if (stopping) return exitWhenAllStopped();
    const delayMs = Math.min(1_000 * 2 ** restarts, 30_000);
    logger.error({ device, code, signal, delayMs }, 'worker process exited; restarting');
    setTimeout(() => start(device, index, restarts + 1), delayMs);
  });
}

/** Once stopping, the launcher exits with its last worker process. */
function exitWhenAllStopped(): void {
  if (children.size === 0) process.exit(0);
}

config.WORKER_DEVICES.split(',').forEach((device, index) => start(device, index));
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    stopping = true;
    for (const child of children.values()) child.kill('SIGTERM');
    exitWhenAllStopped();
  });
}
