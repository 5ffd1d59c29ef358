import { createLogger, loadConfig, onShutdown } from '@inferq/core';
import { workerConfig } from './config.ts';
import { startWorkerProcess } from './worker-process.ts';

const config = loadConfig(workerConfig);
const logger = createLogger({ service: 'inferq-worker', level: config.LOG_LEVEL });
const worker = await startWorkerProcess(config, logger);
onShutdown(logger, [() => worker.close()], config.SHUTDOWN_TIMEOUT_MS);
