/**
 * A feeder thread's entry (started by feeder-threads.ts; bundled as dist/worker/feeder-thread.js): the per-job path
 * (startFeeder) on connections of its own, with the device's host reached over its port. The config comes from main
 * as workerData: a thread reads no environment.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createLogger, startTracingFromConfig } from '@inferq/core';
import { startFeeder, openFeederConnections } from './feeder.ts';
import type { FeederThreadData } from './feeder-protocol.ts';
import { createHostProxy } from './host-proxy.ts';

/** The service its logs and spans are under: the worker's (main.ts). */
const WORKER_SERVICE = 'inferq-worker';

if (!parentPort) throw new Error('feeder-thread.ts runs inside a worker thread (feeder-threads.ts starts it)');
const { config, workerId, index } = workerData as FeederThreadData;
const logger = createLogger({ service: WORKER_SERVICE, level: config.LOG_LEVEL }).child({ workerId, device: config.WORKER_DEVICE, feeder: index });
// Batch and job spans start in this thread: it exports its own, as main.ts does for the main thread.
const tracing = startTracingFromConfig(config, WORKER_SERVICE);
const proxy = createHostProxy(parentPort, logger);
const connections = openFeederConnections(config, logger);
const feeder = await startFeeder({ config, logger, workerId, host: proxy.host, connections });
proxy.serve({
  pause: feeder.pause,
  resume: feeder.resume,
  async close() {
    await feeder.close();
    await connections.close();
    await tracing.shutdown();
    logger.info('feeder stopped');
  },
});
proxy.started();
logger.info({ models: feeder.models() }, 'feeder started');
