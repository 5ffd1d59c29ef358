import { once } from 'node:events';
import { setTimeout } from 'node:timers/promises';
import { createLogger, loadConfig, onShutdown } from '@inferq/core';
import { createPool } from '@inferq/db';
import { createJobProducer, createRedisConnection, readMaxmemoryPolicy } from '@inferq/queue';
import { createStorage } from '@inferq/storage';
import { buildApp } from './app.ts';
import { apiConfig } from './config.ts';

const config = loadConfig(apiConfig);
const logger = createLogger({ service: 'inferq-api', level: config.LOG_LEVEL });
const pool = createPool({ url: config.DATABASE_URL, schema: config.DATABASE_SCHEMA, max: config.DATABASE_POOL_MAX, applicationName: 'inferq-api' });
const redis = createRedisConnection(config.REDIS_URL, 'producer');
redis.on('error', (err) => logger.warn({ err: err.message }, 'redis connection error'));
const producer = createJobProducer({ connection: redis, prefix: config.QUEUE_PREFIX });
const storage = createStorage({
  endpoint: config.S3_ENDPOINT, region: config.S3_REGION, bucket: config.S3_BUCKET,
  accessKeyId: config.S3_ACCESS_KEY_ID, secretAccessKey: config.S3_SECRET_ACCESS_KEY, forcePathStyle: config.S3_FORCE_PATH_STYLE,
});

const { server, keys } = await buildApp({
  logger, pool, redis, producer, storage,
  settings: {
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    modelUploadLimitBytes: config.MODEL_UPLOAD_LIMIT_BYTES,
    inputMaxBytes: config.INPUT_MAX_BYTES,
    inlineTensorMaxBytes: config.INLINE_TENSOR_MAX_BYTES,
    outputUrlTtlS: config.OUTPUT_URL_TTL_S,
    cacheTtlMs: config.CACHE_TTL_MS,
    consoleDir: config.CONSOLE_DIR,
    submitGroupMax: config.SUBMIT_GROUP_MAX,
  },
});

// Give Redis a moment to connect before taking traffic; if it is down the API
// still starts, answering submits with 503 until it is back.
await Promise.race([once(redis, 'ready'), setTimeout(5_000)]);
await storage.ensureBucket();
if (config.ADMIN_API_KEY) await keys.createKey('bootstrap-admin', ['admin'], config.ADMIN_API_KEY);
const policy = await readMaxmemoryPolicy(redis).catch(() => undefined);
if (policy !== undefined && policy !== 'noeviction') logger.warn({ policy }, 'redis maxmemory-policy is not noeviction; queue data may be evicted');

onShutdown(logger, [() => pool.end(), () => redis.quit(), () => producer.close(), () => server.close()]);
const address = await server.listen({ host: config.HOST, port: config.PORT });
logger.info({ address }, 'api listening');
