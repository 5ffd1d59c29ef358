import Fastify, { type FastifyInstance } from 'fastify';
import multipart from '@fastify/multipart';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { ProblemSchema } from '@inferq/contracts';
import type { Logger } from '@inferq/core';
import type { Pool } from '@inferq/db';
import type { JobProducer, Redis } from '@inferq/queue';
import type { Storage } from '@inferq/storage';
import { registerAuth } from './plugins/auth.ts';
import { registerConsole } from './plugins/console.ts';
import { registerErrorHandler } from './plugins/error-handler.ts';
import { apiKeysRoutes } from './routes/api-keys.ts';
import { healthRoutes } from './routes/health.ts';
import { jobsRoutes } from './routes/jobs.ts';
import { modelsRoutes } from './routes/models.ts';
import { systemRoutes } from './routes/system.ts';
import { createApiKeysService, type ApiKeysService } from './services/api-keys-service.ts';
import { createJobsService } from './services/jobs-service.ts';
import { createModelsService } from './services/models-service.ts';
import { createStatsService } from './services/stats-service.ts';

export interface AppDeps {
  logger: Logger;
  pool: Pool;
  redis: Redis;
  producer: JobProducer;
  storage: Storage;
  settings: {
    bodyLimitBytes: number;
    modelUploadLimitBytes: number;
    inputMaxBytes: number;
    inlineTensorMaxBytes: number;
    outputUrlTtlS: number;
    cacheTtlMs: number;
    /** Most submissions recorded in one group commit. @default 256 */
    submitGroupMax?: number;
    /** The built web console, served at `/` when present. */
    consoleDir?: string;
  };
}

export interface App {
  server: FastifyInstance;
  keys: ApiKeysService;
}

/** Builds the Fastify app without listening, so tests drive it with inject(). */
export async function buildApp(deps: AppDeps): Promise<App> {
  const { settings } = deps;
  const server = Fastify({
    loggerInstance: deps.logger,
    bodyLimit: settings.bodyLimitBytes,
    genReqId: (req) => (typeof req.headers['x-request-id'] === 'string' ? req.headers['x-request-id'].slice(0, 64) : crypto.randomUUID()),
    requestIdHeader: false,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: true, useDefaults: true, allErrors: false } },
    return503OnClosing: true,
    // One access line per request (below), not Fastify's two.
    disableRequestLogging: true,
  }) as unknown as FastifyInstance;

  server.addHook('onResponse', async (request, reply) => {
    request.log.info({ method: request.method, url: request.url, statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime * 100) / 100 }, 'request completed');
  });

  // The API speaks JSON (and multipart for uploads); plain text is refused with 415.
  server.removeContentTypeParser('text/plain');
  server.addSchema(ProblemSchema);
  await server.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'inferq', version: '0.1.0', description: 'Asynchronous inference for ONNX models: submit jobs, poll for results.' },
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
  const jobs = createJobsService({
    pool: deps.pool, producer: deps.producer, storage: deps.storage, models,
    limits: { inputMaxBytes: settings.inputMaxBytes, inlineTensorMaxBytes: settings.inlineTensorMaxBytes, submitGroupMax: settings.submitGroupMax ?? 256 },
  });
  registerAuth(server, keys);

  await server.register(healthRoutes, { pool: deps.pool, redis: deps.redis });
  await server.register(jobsRoutes, { jobs, storage: deps.storage, outputUrlTtlS: settings.outputUrlTtlS });
  await server.register(modelsRoutes, { models, uploadLimitBytes: settings.modelUploadLimitBytes });
  await server.register(apiKeysRoutes, { keys });
  await server.register(systemRoutes, { stats: createStatsService({ pool: deps.pool, producer: deps.producer, redis: deps.redis }), redis: deps.redis, producer: deps.producer });
  if (settings.consoleDir) await registerConsole(server, settings.consoleDir);
  await server.ready();
  return { server, keys };
}
