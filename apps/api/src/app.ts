import Fastify, { LogController, type FastifyInstance } from 'fastify';
import multipart from '@fastify/multipart';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { FILE_EXPIRY_MAX_S, ProblemSchema } from '@inferq/contracts';
import type { Logger } from '@inferq/core';
import type { Pool } from '@inferq/db';
import { createJobEvents, watchRedisOutages, type JobProducer, type RedisClient } from '@inferq/queue';
import { createTensorStore, type InlineTensorForm, type Storage, type TensorStore } from '@inferq/storage';
import { createApiMetrics, type ApiMetrics } from './metrics/api-metrics.ts';
import { registerAuth } from './plugins/auth.ts';
import { createClientErrorHandler, registerTransferEncodingCheck } from './plugins/client-errors.ts';
import { registerConsole } from './plugins/console.ts';
import { registerErrorHandler, replyWithProblem } from './plugins/error-handler.ts';
import { registerGracefulClose } from './plugins/graceful-close.ts';
import { registerRateLimit } from './plugins/rate-limit.ts';
import { registerTracing } from './plugins/tracing.ts';
import { apiKeysRoutes } from './routes/api-keys.ts';
import { auditRoutes } from './routes/audit.ts';
import { healthRoutes } from './routes/health.ts';
import { jobEventsRoutes } from './routes/job-events.ts';
import { jobsRoutes } from './routes/jobs.ts';
import { jobsBulkRoutes } from './routes/jobs-bulk.ts';
import { kserveV2Routes } from './routes/kserve-v2.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { openAiBatchRoutes } from './routes/openai-batches.ts';
import { openAiEmbeddingsRoutes } from './routes/openai-embeddings.ts';
import { usageRoutes } from './routes/usage.ts';
import { modelsRoutes } from './routes/models.ts';
import { modelQueueRoutes } from './routes/model-queue.ts';
import { modelSettingsRoutes } from './routes/model-settings.ts';
import { systemRoutes } from './routes/system.ts';
import { uploadsRoutes } from './routes/uploads.ts';
import { webhooksRoutes } from './routes/webhooks.ts';
import { createApiKeysService, type ApiKeysService } from './services/keys/api-keys-service.ts';
import { createAuditService } from './services/keys/audit-service.ts';
import { createJobViewCache } from './services/jobs/view/job-view-cache.ts';
import { createJobsService } from './services/jobs/jobs-service.ts';
import { createRecentAccepts, type RecentAccepts } from './services/jobs/intake/recent-accepts.ts';
import { createJobsBulkService } from './services/jobs/jobs-bulk-service.ts';
import { createJobRetention, type JobRetention } from './services/jobs/job-retention-service.ts';
import { createEmbeddingsService } from './services/protocols/embeddings-service.ts';
import { createTokenizerCache } from './services/models/tokenizers.ts';
import { createJobEventStream } from './services/jobs/view/job-event-stream.ts';
import { createJobWaiter } from './services/jobs/view/job-waiter.ts';
import { createSubmitAndWait } from './services/jobs/submit-and-wait.ts';
import { createModelsService } from './services/models/models-service.ts';
import { createModelRetirement, type ModelRetirementService } from './services/models/model-retirement.ts';
import { createModelSettingsService } from './services/models/model-settings-service.ts';
import { createQueueControl } from './services/models/queue-control.ts';
import { createReadiness } from './services/system/readiness.ts';
import { createStatsService } from './services/system/stats-service.ts';
import { createUsageService } from './services/system/usage-service.ts';
import { createUploadsService, type UploadsService } from './services/uploads/uploads-service.ts';
import { createWebhooksService } from './services/webhooks/webhooks-service.ts';
import type { WebhookSettings } from './webhooks/webhook-dispatcher.ts';
import type { StorageSetup } from './background/storage-setup.ts';
import { createBatchEndpoints } from './batch-api/batch-endpoints.ts';
import { createBulkBatchRunner, type BulkBatchRunner } from './batch-api/bulk-batch-runner.ts';
import { createBatchesService } from './batch-api/batches-service.ts';
import { createFilesService } from './batch-api/files-service.ts';

export interface AppDeps {
  logger: Logger;
  pool: Pool;
  redis: RedisClient;
  producer: JobProducer;
  storage: Storage;
  /** The bucket's setup at start (main.ts), reported on /readyz; tests that made their bucket leave it out. */
  storageSetup?: Pick<StorageSetup, 'check'>;
  settings: {
    bodyLimitBytes: number;
    modelUploadLimitBytes: number;
    inputMaxBytes: number;
    inlineTensorMaxBytes: number;
    /** INLINE_TENSOR_FORM; `bytes` when unset. */
    inlineTensorForm?: InlineTensorForm;
    outputUrlTtlS: number;
    /** UPLOAD_TTL_S: how long an upload's presigned URL and the unused upload last. @default 3600 */
    uploadTtlS?: number;
    cacheTtlMs: number;
    /** The longest retention an override may set (the bucket's expiry rule for job objects); unset: no limit. */
    retentionCeilingS?: number;
    /** JOB_RETENTION_S and JOB_INPUT_RETENTION_S, which the model views show where no override applies. @default 604800, 0 */
    jobRetentionS?: number;
    inputRetentionS?: number;
    /** Most submissions recorded in one group commit. @default 256 */
    submitGroupMax?: number;
    /** SUBMIT_QUEUE_TIMEOUT_MS: the longest a sent queue write is waited for before the job is accepted anyway. @default 3000 */
    submitQueueTimeoutMs?: number;
    /** Jobs waiting per model queue above which submissions get 429 QUEUE_FULL; 0: no limit. @default 0 */
    queueMaxDepth?: number;
    /** INPUT_SEGMENTS: a submit group's small inputs are written as one S3 object, not into the job rows. @default true */
    inputSegments?: boolean;
    /** QUEUE_CARRIED_INPUTS_MB: Redis memory a model's queue may spend carrying inline inputs (carriesInputs); 0: none. @default 64 */
    queueCarriedInputsMb?: number;
    /** The longest `Prefer: wait=N` honoured, in seconds. @default 60 */
    waitMaxS?: number;
    /** JOB_VIEW_CACHE_MS: how long a poll may answer from memory (job-view-cache.ts); 0: every poll reads Postgres. @default 0 */
    jobViewCacheMs?: number;
    /** What the routes need of the webhook settings; the dispatcher is started beside the app (main.ts). */
    webhooks: Pick<WebhookSettings, 'signingSecret' | 'allowPrivate'>;
    /** Requests per minute per key without a limit of its own; 0: not limited. @default 0 */
    rateLimitPerMin?: number;
    /** The built web console, served at `/` when present. */
    consoleDir?: string;
    /** Trace requests (OpenTelemetry); on when an exporter is configured. @default false */
    tracing?: boolean;
    /** Time to receive a request's headers, then the whole request (0: no limit); past it, 408 REQUEST_TIMEOUT. @default 60 s, none */
    headersTimeoutMs?: number;
    requestTimeoutMs?: number;
    /**
     * The Batch API: BATCH_FILE_MAX_BYTES, BATCH_FILE_EXPIRES_S, BATCH_MAX_LINES, BATCH_JOBS_IN_FLIGHT, BATCH_RUNNERS,
     * BATCH_LEASE_MS. @default 2 GiB, 30 days, 5,000,000, 10,000, 2, 30 s
     */
    batches?: {
      fileMaxBytes?: number;
      fileExpiresS?: number;
      maxLines?: number;
      jobsInFlight?: number;
      runners?: number;
      leaseMs?: number;
      pollMs?: number;
    };
  };
}

/** What the OpenAPI document and the Open Inference Protocol's server metadata report. */
const API_VERSION = '0.1.0';

/** A route the app serves and the scope it needs (none: public). */
interface RouteSummary {
  method: string;
  url: string;
  scope: string | undefined;
}

export interface App {
  server: FastifyInstance;
  keys: ApiKeysService;
  /** main.ts sweeps retired artifacts with it on a timer; tests call it directly. */
  retirement: ModelRetirementService;
  /** Purge and input drop (the retention sweeper started beside the app uses it, main.ts). */
  retention: JobRetention;
  /** The Prometheus metrics (/metrics): background tasks started beside the app (main.ts) count into them. */
  metrics: ApiMetrics;
  /** Every route, so tests can prove each one is authenticated (invariant 6). */
  routes: readonly RouteSummary[];
  /** Where job tensors live (inline or S3, INLINE_TENSOR_MAX_BYTES): the webhook dispatcher (main.ts) shows outputs through it. */
  tensors: TensorStore;
  /** Clients' uploads (POST /v1/uploads); the submit path claims them. */
  uploads: UploadsService;
  /** Advances Batch API batches: main.ts starts it beside the app; tests start it themselves. */
  bulkBatchRunner: BulkBatchRunner;
  /** The jobs accepted lately: main.ts checks them against the record after a Postgres failover. */
  recentAccepts: RecentAccepts;
}

/** Builds the Fastify app without listening, so tests drive it with inject(). */
export async function buildApp(deps: AppDeps): Promise<App> {
  const { settings } = deps;
  const requestTimeout = settings.requestTimeoutMs ?? 0;
  // Node refuses a headers timeout longer than the request timeout.
  const headersTimeout = Math.min(settings.headersTimeoutMs ?? 60_000, requestTimeout || Infinity);
  const server = Fastify({
    loggerInstance: deps.logger,
    bodyLimit: settings.bodyLimitBytes,
    genReqId: (req) => (typeof req.headers['x-request-id'] === 'string' ? req.headers['x-request-id'].slice(0, 64) : crypto.randomUUID()),
    requestIdHeader: false,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: true, useDefaults: true, allErrors: false } },
    return503OnClosing: true,
    // Undecodable URLs and overlong path parameters are answered before the error handler exists for them.
    // The problem is sent; the reply it returns (a thenable, as every Fastify reply) means nothing to this hook.
    frameworkErrors: (err, request, reply) => void replyWithProblem(err, request, reply),
    // What Node's parser refuses (headers too large, a garbage request line, a timeout) gets a problem+json on the socket.
    clientErrorHandler: createClientErrorHandler(deps.logger),
    requestTimeout,
    // Timeouts are checked every half of the shortest one (Node's default: every 30 s).
    http: { headersTimeout, requestTimeout, connectionsCheckingInterval: Math.max(10, Math.min(30_000, Math.floor(headersTimeout / 2))) },
    // One access line per request (below), not Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
  }) as unknown as FastifyInstance;

  if (settings.tracing) registerTracing(server);
  registerTransferEncodingCheck(server);
  registerGracefulClose(server);
  const routes: RouteSummary[] = [];
  server.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url, scope: route.config?.scope });
  });

  const metrics = createApiMetrics({ pool: deps.pool, producer: deps.producer, redis: deps.redis });
  // One warning when the primary is lost, one line when writes are accepted again; driver noise at debug.
  watchRedisOutages(deps.redis, { connection: 'producer', logger: deps.logger, ...metrics.redisConnection('producer') });
  server.addHook('onResponse', async (request, reply) => {
    metrics.observeRequest(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    request.log.info(
      { method: request.method, url: request.url, statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime * 100) / 100 },
      'request completed',
    );
  });

  // The API speaks JSON (and multipart for uploads); plain text is refused with 415.
  server.removeContentTypeParser('text/plain');
  server.addSchema(ProblemSchema);
  await server.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'inferq',
        version: API_VERSION,
        description:
          'Asynchronous inference for ONNX models: submit jobs, poll for results. Every error is application/problem+json with a stable `code`, ' +
          'those made before any route runs included: 400 `MALFORMED_REQUEST`, 408 `REQUEST_TIMEOUT`, 413 `PAYLOAD_TOO_LARGE`, ' +
          '415 `UNSUPPORTED_MEDIA_TYPE`, 431 `HEADERS_TOO_LARGE`, 501 `TRANSFER_ENCODING_UNSUPPORTED`.',
      },
      components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'An inferq API key: `Authorization: Bearer iq_…`' } } },
      security: [{ apiKey: [] }],
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await server.register(swaggerUi, { routePrefix: '/docs' });
  await server.register(multipart);
  registerErrorHandler(server);

  const keys = createApiKeysService(deps.pool, { cacheTtlMs: settings.cacheTtlMs });
  const models = createModelsService({ pool: deps.pool, storage: deps.storage, cacheTtlMs: settings.cacheTtlMs });
  const tensors = createTensorStore({ storage: deps.storage, inlineMaxBytes: settings.inlineTensorMaxBytes, inlineForm: settings.inlineTensorForm });
  const uploads = createUploadsService({
    pool: deps.pool,
    storage: deps.storage,
    tensors,
    logger: deps.logger,
    ttlS: settings.uploadTtlS ?? 3_600,
    maxBytes: settings.inputMaxBytes,
    onEvent: (event) => metrics.upload(event),
  });
  const events = createJobEvents({ connection: deps.redis, prefix: deps.producer.prefix });
  server.addHook('onClose', () => events.close());
  const recentAccepts = createRecentAccepts({ pool: deps.pool });
  const jobs = createJobsService({
    uploads,
    recentAccepts,
    views: createJobViewCache({ events, ttlMs: settings.jobViewCacheMs ?? 0, onRead: metrics.jobViewRead }),
    pool: deps.pool,
    producer: deps.producer,
    tensors,
    models,
    webhookAllowPrivate: settings.webhooks.allowPrivate,
    onCacheLookup: metrics.cacheLookup,
    inputSegments: settings.inputSegments !== false && {
      onSegment: (jobs, err) => {
        metrics.inputSegment(err === undefined);
        if (err !== undefined) deps.logger.warn({ err, jobs }, 'input segment not written: the group keeps its inputs in its rows');
      },
    },
    limits: {
      inputMaxBytes: settings.inputMaxBytes,
      submitGroupMax: settings.submitGroupMax ?? 256,
      submitQueueTimeoutMs: settings.submitQueueTimeoutMs ?? 3_000,
      queueMaxDepth: settings.queueMaxDepth ?? 0,
      carriedInputsBytes: (settings.queueCarriedInputsMb ?? 64) * 1024 * 1024,
    },
  });
  const retention = createJobRetention({
    pool: deps.pool,
    storage: deps.storage,
    jobs,
    logger: server.log,
    onPurged: metrics.jobsPurged,
    onInputsDropped: metrics.jobInputsDropped,
  });
  registerAuth(server, keys);
  await registerRateLimit(server, { redis: deps.redis, keyPrefix: deps.producer.prefix, defaultPerMin: settings.rateLimitPerMin ?? 0 });

  const readiness = createReadiness({ pool: deps.pool, redis: deps.redis, producer: deps.producer, storageSetup: deps.storageSetup });
  await server.register(healthRoutes, { readiness });
  await server.register(metricsRoutes, { metrics });
  const waiter = createJobWaiter({
    redis: deps.redis,
    prefix: deps.producer.prefix,
    events,
    getJob: jobs.getJob,
    resolveModelName: async (ref) => (await models.resolveModel(ref)).name,
  });
  const runner = createSubmitAndWait({ jobs, waiter, tensors, waitMaxS: settings.waitMaxS ?? 60, onJobSubmitted: metrics.jobSubmitted });
  await server.register(jobsRoutes, { jobs, runner, retention, tensors, outputUrlTtlS: settings.outputUrlTtlS, inputMaxBytes: settings.inputMaxBytes });
  await server.register(uploadsRoutes, { uploads });
  await server.register(jobsBulkRoutes, { bulk: createJobsBulkService({ pool: deps.pool, producer: deps.producer, jobs, logger: server.log }) });
  await server.register(jobEventsRoutes, { jobs, streamJobEvents: createJobEventStream({ events, getJob: jobs.getJob }) });
  const retirement = createModelRetirement({ pool: deps.pool, storage: deps.storage, models, logger: deps.logger });
  const modelSettings = createModelSettingsService({
    pool: deps.pool,
    models,
    defaults: { jobRetentionS: settings.jobRetentionS ?? 604_800, inputRetentionS: settings.inputRetentionS ?? 0 },
    retentionCeilingS: settings.retentionCeilingS,
  });
  await server.register(modelsRoutes, { models, retirement, settings: modelSettings, uploadLimitBytes: settings.modelUploadLimitBytes });
  await server.register(modelSettingsRoutes, { settings: modelSettings });
  await server.register(modelQueueRoutes, { queues: createQueueControl({ pool: deps.pool, producer: deps.producer, redis: deps.redis }) });
  await server.register(kserveV2Routes, { models, runner, waiter, readiness, version: API_VERSION });
  const embeddings = createEmbeddingsService({ models, runner, tokenizers: createTokenizerCache(deps.storage) });
  await server.register(openAiEmbeddingsRoutes, { embeddings });
  await server.register(apiKeysRoutes, { keys, retentionCeilingS: settings.retentionCeilingS });
  await server.register(auditRoutes, { audit: createAuditService(deps.pool) });
  await server.register(usageRoutes, { usage: createUsageService(deps.pool) });
  await server.register(webhooksRoutes, {
    webhooks: createWebhooksService({ pool: deps.pool, signingSecret: settings.webhooks.signingSecret, getJob: jobs.getJob }),
  });
  await server.register(systemRoutes, { stats: createStatsService({ pool: deps.pool, producer: deps.producer, redis: deps.redis }) });
  const batchSettings = settings.batches ?? {};
  const bulkBatchRunner = createBulkBatchRunner({
    pool: deps.pool,
    storage: deps.storage,
    jobs,
    producer: deps.producer,
    endpoints: createBatchEndpoints({ embeddings, tensors, outputUrlTtlS: settings.outputUrlTtlS }),
    logger: deps.logger,
    onSubmitted: metrics.batchLinesSubmitted,
    settings: {
      runners: batchSettings.runners ?? 2,
      jobsInFlight: batchSettings.jobsInFlight ?? 10_000,
      maxLines: batchSettings.maxLines ?? 5_000_000,
      pollMs: batchSettings.pollMs,
      leaseMs: batchSettings.leaseMs,
    },
  });
  await server.register(openAiBatchRoutes, {
    files: createFilesService({
      pool: deps.pool,
      storage: deps.storage,
      logger: deps.logger,
      maxBytes: batchSettings.fileMaxBytes ?? 2 * 1024 ** 3,
      defaultExpiresS: batchSettings.fileExpiresS ?? FILE_EXPIRY_MAX_S,
    }),
    batches: createBatchesService({ pool: deps.pool, onCreated: () => bulkBatchRunner.wake() }),
    fileMaxBytes: batchSettings.fileMaxBytes ?? 2 * 1024 ** 3,
  });
  if (settings.consoleDir) await registerConsole(server, settings.consoleDir);
  await server.ready();
  return { server, keys, retirement, retention, metrics, routes, tensors, uploads, bulkBatchRunner, recentAccepts };
}
