import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { setTimeout } from 'node:timers/promises';
import { createLogger, loadConfig, onShutdown, startTracing } from '@inferq/core';
import { createPool } from '@inferq/db';
import { createJobProducer, createRedisConnection, readMaxmemoryPolicy } from '@inferq/queue';
import { createStorage } from '@inferq/storage';
import { buildApp } from './app.ts';
import { createDeadlineSweeper } from './background/deadline-sweeper.ts';
import { apiConfig } from './config.ts';
import { createWebhookDispatcher, type WebhookSettings } from './webhooks/webhook-dispatcher.ts';

const config = loadConfig(apiConfig);
// Before anything opens a connection or a span, so every span has a provider.
const tracing = startTracing({
  serviceName: config.OTEL_SERVICE_NAME ?? 'inferq-api',
  endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
  sampleRatio: config.OTEL_TRACES_SAMPLER_ARG,
  exportDelayMs: config.OTEL_BSP_SCHEDULE_DELAY,
});
const logger = createLogger({ service: 'inferq-api', level: config.LOG_LEVEL });
const pool = createPool({ url: config.DATABASE_URL, schema: config.DATABASE_SCHEMA, max: config.DATABASE_POOL_MAX, applicationName: 'inferq-api' });
const redis = createRedisConnection(config.REDIS_URL, 'producer');
redis.on('error', (err) => logger.warn({ err: err.message }, 'redis connection error'));
const producer = createJobProducer({ connection: redis, prefix: config.QUEUE_PREFIX, fair: config.FAIR_SCHEDULING });
const storage = createStorage({
  endpoint: config.S3_ENDPOINT,
  publicEndpoint: config.S3_PUBLIC_ENDPOINT,
  region: config.S3_REGION,
  bucket: config.S3_BUCKET,
  accessKeyId: config.S3_ACCESS_KEY_ID,
  secretAccessKey: config.S3_SECRET_ACCESS_KEY,
  forcePathStyle: config.S3_FORCE_PATH_STYLE,
});
if (!config.WEBHOOK_SIGNING_SECRET) logger.warn('WEBHOOK_SIGNING_SECRET is unset: webhook secrets change at every restart and differ between replicas');
const webhookSettings: WebhookSettings = {
  signingSecret: config.WEBHOOK_SIGNING_SECRET ?? randomBytes(32).toString('base64'),
  allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
  maxAttempts: config.WEBHOOK_MAX_ATTEMPTS,
  pollIntervalMs: config.WEBHOOK_POLL_INTERVAL_MS,
  timeoutMs: config.WEBHOOK_TIMEOUT_MS,
  retryBaseMs: config.WEBHOOK_RETRY_BASE_MS,
  concurrency: config.WEBHOOK_CONCURRENCY,
  outputUrlTtlS: config.OUTPUT_URL_TTL_S,
};

const { server, keys } = await buildApp({
  logger,
  pool,
  redis,
  producer,
  storage,
  settings: {
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    modelUploadLimitBytes: config.MODEL_UPLOAD_LIMIT_BYTES,
    inputMaxBytes: config.INPUT_MAX_BYTES,
    inlineTensorMaxBytes: config.INLINE_TENSOR_MAX_BYTES,
    outputUrlTtlS: config.OUTPUT_URL_TTL_S,
    cacheTtlMs: config.CACHE_TTL_MS,
    consoleDir: config.CONSOLE_DIR,
    submitGroupMax: config.SUBMIT_GROUP_MAX,
    queueMaxDepth: config.QUEUE_MAX_DEPTH,
    rateLimitPerMin: config.RATE_LIMIT_PER_MIN,
    waitMaxS: config.WAIT_MAX_S,
    webhooks: webhookSettings,
    tracing: config.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined,
    headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
  },
});
const webhooks = createWebhookDispatcher({ pool, storage, logger, settings: webhookSettings });
const deadlines = createDeadlineSweeper({ pool, producer, logger, intervalMs: config.DEADLINE_SWEEP_INTERVAL_MS });

// Give Redis a moment to connect before taking traffic; if it is down the API
// still starts, answering submits with 503 until it is back.
await Promise.race([once(redis, 'ready'), setTimeout(5_000)]);
await storage.ensureBucket();
if (config.ADMIN_API_KEY) await keys.createKey('bootstrap-admin', ['admin'], { key: config.ADMIN_API_KEY });
const policy = await readMaxmemoryPolicy(redis).catch(() => undefined);
if (policy !== undefined && policy !== 'noeviction') logger.warn({ policy }, 'redis maxmemory-policy is not noeviction; queue data may be evicted');

deadlines.start();
webhooks.start();
// Closed in reverse: the server stops taking requests first, the sweeper before the pool it uses.
onShutdown(logger, [
  () => tracing.shutdown(),
  () => pool.end(),
  () => redis.quit(),
  () => producer.close(),
  () => deadlines.stop(),
  () => webhooks.close(),
  () => server.close(),
]);
const address = await server.listen({ host: config.HOST, port: config.PORT });
logger.info({ address }, 'api listening');
