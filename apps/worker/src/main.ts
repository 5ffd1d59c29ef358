import { createLogger, loadConfig, onShutdown, startTracingFromConfig } from '@inferq/core';
import { workerConfig } from './config.ts';
import { startWorkerProcess } from './worker-process.ts';

const config = loadConfig(workerConfig);
const logger = createLogger({ service: 'inferq-worker', level: config.LOG_LEVEL });
const tracing = startTracingFromConfig(config, 'inferq-worker');
const worker = await startWorkerProcess(config, logger);
// Closed in reverse: the worker drains first, then its last spans are exported.
onShutdown(logger, [() => tracing.shutdown(), () => worker.close()], config.SHUTDOWN_TIMEOUT_MS);
