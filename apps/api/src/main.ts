import { randomBytes } from 'node:crypto';
import { createLogger, loadConfig, onShutdown, startTracingFromConfig } from '@inferq/core';
import { asyncReplicationWarning, createPoolFromConfig, readReplicationState, watchPostgresOutages } from '@inferq/db';
import { createJobProducer, createRedisConnection, waitForReady, warnOnEvictionPolicy } from '@inferq/queue';
import {
  createStorageFromConfig,
  JOB_OBJECTS_EXPIRY_RULE,
  JOB_OBJECTS_PREFIX,
  UPLOAD_OBJECTS_EXPIRE_DAYS,
  UPLOAD_OBJECTS_EXPIRY_RULE,
  UPLOAD_OBJECTS_PREFIX,
} from '@inferq/storage';
import { buildApp } from './app.ts';
import { retentionCeilingS } from './services/jobs/retention-ceiling.ts';
import { createDeadlineSweeper } from './background/deadline-sweeper.ts';
import { createPartitionMaintainer } from './background/partition-maintainer.ts';
import { createRetiredArtifactSweeper } from './background/retired-artifact-sweeper.ts';
import { createRetentionSweeper } from './background/retention-sweeper.ts';
import { createOrphanSweeper, ORPHAN_SWEEP_MARGIN_S } from './background/orphan-sweeper.ts';
import { createUploadsSweeper } from './background/uploads-sweeper.ts';
import { createFilesSweeper } from './background/files-sweeper.ts';
import { createStorageSetup } from './background/storage-setup.ts';
import { apiConfig, checkApiConfig } from './config.ts';
import { checkAcceptsAfterFailover } from './services/jobs/intake/recent-accepts.ts';
import { createWebhookDispatcher, type WebhookSettings } from './webhooks/webhook-dispatcher.ts';

const config = checkApiConfig(loadConfig(apiConfig));
// Before anything opens a connection or a span, so every span has a provider.
const tracing = startTracingFromConfig(config, 'inferq-api');
const logger = createLogger({ service: 'inferq-api', level: config.LOG_LEVEL });
const pool = createPoolFromConfig(config, 'inferq-api', logger);
const redis = createRedisConnection(config.REDIS_URL, 'producer');
const producer = createJobProducer({ connection: redis, prefix: config.QUEUE_PREFIX, fair: config.FAIR_SCHEDULING, groupMax: config.QUEUE_GROUP_MAX });
const storage = createStorageFromConfig(config);
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

const storageSetup = createStorageSetup({
  storage,
  logger,
  rules: [
    { id: JOB_OBJECTS_EXPIRY_RULE, prefix: JOB_OBJECTS_PREFIX, days: config.S3_JOB_OBJECTS_EXPIRE_DAYS, what: 'job objects' },
    { id: UPLOAD_OBJECTS_EXPIRY_RULE, prefix: UPLOAD_OBJECTS_PREFIX, days: UPLOAD_OBJECTS_EXPIRE_DAYS, what: 'uploads' },
  ],
});

const { server, keys, retirement, retention, metrics, tensors, bulkBatchRunner, recentAccepts } = await buildApp({
  storageSetup,
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
    inlineTensorForm: config.INLINE_TENSOR_FORM,
    inputSegments: config.INPUT_SEGMENTS,
    outputUrlTtlS: config.OUTPUT_URL_TTL_S,
    uploadTtlS: config.UPLOAD_TTL_S,
    cacheTtlMs: config.CACHE_TTL_MS,
    retentionCeilingS: retentionCeilingS(config.S3_JOB_OBJECTS_EXPIRE_DAYS, config.JOB_TOMBSTONE_RETENTION_S),
    jobRetentionS: config.JOB_RETENTION_S,
    inputRetentionS: config.JOB_INPUT_RETENTION_S,
    consoleDir: config.CONSOLE_DIR,
    submitGroupMax: config.SUBMIT_GROUP_MAX,
    submitQueueTimeoutMs: config.SUBMIT_QUEUE_TIMEOUT_MS,
    queueMaxDepth: config.QUEUE_MAX_DEPTH,
    queueCarriedInputsMb: config.QUEUE_CARRIED_INPUTS_MB,
    rateLimitPerMin: config.RATE_LIMIT_PER_MIN,
    waitMaxS: config.WAIT_MAX_S,
    jobViewCacheMs: config.JOB_VIEW_CACHE_MS,
    webhooks: webhookSettings,
    tracing: config.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined,
    headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
    batches: {
      fileMaxBytes: config.BATCH_FILE_MAX_BYTES,
      fileExpiresS: config.BATCH_FILE_EXPIRES_S,
      maxLines: config.BATCH_MAX_LINES,
      jobsInFlight: config.BATCH_JOBS_IN_FLIGHT,
      runners: config.BATCH_RUNNERS,
      leaseMs: config.BATCH_LEASE_MS,
    },
  },
});
// Why nothing is lost: a warning at start only; a primary that cannot be read now is no reason to stop.
void readReplicationState(pool).then(
  (state) => {
    const warning = asyncReplicationWarning(state);
    if (warning) logger.warn({ replicas: state.replicas, synchronousStandbyNames: state.synchronousStandbyNames }, warning);
  },
  () => {},
);
const webhooks = createWebhookDispatcher({ pool, tensors, logger, settings: webhookSettings });
const deadlines = createDeadlineSweeper({ pool, producer, logger, intervalMs: config.DEADLINE_SWEEP_INTERVAL_MS });
const retiredArtifacts = createRetiredArtifactSweeper({
  retirement,
  logger,
  intervalMs: config.RETIRED_ARTIFACT_SWEEP_INTERVAL_MS,
  graceMs: config.RETIRED_ARTIFACT_GRACE_MS,
});
const retentionSweeper = createRetentionSweeper({
  pool,
  redis,
  prefix: producer.prefix,
  retention,
  logger,
  intervalMs: config.RETENTION_SWEEP_INTERVAL_MS,
  jobRetentionS: config.JOB_RETENTION_S,
  inputRetentionS: config.JOB_INPUT_RETENTION_S,
  onSwept: metrics.retentionSweepBehind,
});
const orphans = createOrphanSweeper({
  pool,
  redis,
  prefix: producer.prefix,
  storage,
  logger,
  intervalMs: config.ORPHAN_SWEEP_INTERVAL_MS,
  maxObjectsPerPass: config.ORPHAN_SWEEP_MAX_OBJECTS,
  minAgeS: config.JOB_RETENTION_S + ORPHAN_SWEEP_MARGIN_S,
  onDeleted: metrics.jobOrphanedObjectsDeleted,
});
const uploadsSweeper = createUploadsSweeper({
  pool,
  redis,
  prefix: producer.prefix,
  storage,
  logger,
  intervalMs: config.UPLOAD_SWEEP_INTERVAL_MS,
  onExpired: (count) => metrics.upload('expired', count),
});
const filesSweeper = createFilesSweeper({ pool, redis, prefix: producer.prefix, storage, logger, intervalMs: config.FILE_SWEEP_INTERVAL_MS });
const partitions = createPartitionMaintainer({
  pool,
  redis,
  prefix: producer.prefix,
  logger,
  aheadDays: config.JOB_PARTITIONS_AHEAD_DAYS,
  tombstoneRetentionS: config.JOB_TOMBSTONE_RETENTION_S,
  auditRetentionS: config.AUDIT_RETENTION_S,
  onDropped: metrics.jobPartitionsDropped,
  onRowsDeleted: metrics.retentionRowsDeleted,
});

// Give Redis a moment to connect before taking traffic; if it is down the API
// still starts, answering submits with 503 until it is back.
await waitForReady(redis, 5_000);
// Object storage may come up after the API (MinIO beside it): the bucket is made when it answers, /readyz says until then.
void storageSetup.run();
// Before taking traffic: a job can only be inserted into an existing day's partition.
await partitions.ensureNow().catch((err: Error) => logger.error({ err: err.message }, 'creating job partitions failed'));
if (config.ADMIN_API_KEY) await keys.createKey('bootstrap-admin', ['admin'], { key: config.ADMIN_API_KEY });
await warnOnEvictionPolicy(redis, logger);

// One warning when the Postgres primary is lost, one info line when writes are accepted again (inferq_postgres_up and the rest).
const postgresWatch = watchPostgresOutages(pool, {
  logger,
  ...metrics.postgres,
  onFailover(primary, previous) {
    metrics.postgres.onFailover?.(primary, previous);
    // Why nothing is lost: it never rejects, and says what it could not check.
    void checkAcceptsAfterFailover(recentAccepts, { logger, onLost: metrics.jobsRecordLost });
  },
});
postgresWatch.start();
deadlines.start();
retiredArtifacts.start();
retentionSweeper.start();
orphans.start();
uploadsSweeper.start();
filesSweeper.start();
partitions.start();
webhooks.start();
bulkBatchRunner.start();
// Closed in reverse: the server stops taking requests first, the sweeper before the pool it uses.
onShutdown(logger, [
  () => tracing.shutdown(),
  () => pool.end(),
  () => postgresWatch.stop(),
  () => redis.quit(),
  () => producer.close(),
  () => deadlines.stop(),
  () => retiredArtifacts.stop(),
  () => retentionSweeper.stop(),
  () => orphans.stop(),
  () => uploadsSweeper.stop(),
  () => filesSweeper.stop(),
  () => partitions.stop(),
  () => webhooks.close(),
  () => bulkBatchRunner.stop(),
  () => server.close(),
]);
const address = await server.listen({ host: config.HOST, port: config.PORT });
logger.info({ address }, 'api listening');
