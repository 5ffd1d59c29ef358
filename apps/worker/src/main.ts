import { createLogger, loadConfig, onShutdown, startTracing } from '@inferq/core';
import { workerConfig } from './config.ts';
import { startWorkerProcess } from './worker-process.ts';

const config = loadConfig(workerConfig);
const logger = createLogger({ service: 'inferq-worker', level: config.LOG_LEVEL });
const tracing = startTracing({
  serviceName: config.OTEL_SERVICE_NAME ?? 'inferq-worker',
  endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
  sampleRatio: config.OTEL_TRACES_SAMPLER_ARG,
  exportDelayMs: config.OTEL_BSP_SCHEDULE_DELAY,
});
const worker = await startWorkerProcess(config, logger);
// Closed in reverse: the worker drains first, then its last spans are exported.
onShutdown(logger, [() => tracing.shutdown(), () => worker.close()], config.SHUTDOWN_TIMEOUT_MS);
