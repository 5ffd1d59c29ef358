/**
 * A worker process whose sessions run on the timed device (device-time.ts):
 * apps/worker's main with the session opener swapped. Bench-only, started by
 * the bench as a process in place of apps/worker/src/main.ts (bundled, as the
 * images' worker is, unless the bench runs it from sources: worker-entries.ts).
 */
import { createLogger, loadConfig, onShutdown } from '@inferq/core';
import { openModelSession } from '@inferq/inference';
import { workerConfig } from '@inferq/worker/config';
import { startWorkerProcess } from '@inferq/worker/worker-process';
import { deviceTimeFromEnv } from './device-time.ts';

const config = loadConfig(workerConfig);
const logger = createLogger({ service: 'inferq-worker', level: config.LOG_LEVEL });
// From sources or bundled beside it (scripts/build-server.mjs bench-worker).
const threadEntry = new URL(import.meta.url.endsWith('.ts') ? './timed-session-thread.ts' : './timed-session-thread.js', import.meta.url);
logger.info({ deviceTime: deviceTimeFromEnv() }, 'sessions run on the timed device');
const worker = await startWorkerProcess(config, logger, { openSession: (options) => openModelSession({ ...options, threadEntry }) });
onShutdown(logger, [() => worker.close()], config.SHUTDOWN_TIMEOUT_MS);
