import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  V2InferBodySchema,
  V2InferResponseSchema,
  V2LiveSchema,
  V2ModelMetadataSchema,
  V2ModelParamsSchema,
  V2ModelVersionParamsSchema,
  V2ReadySchema,
  V2ServerMetadataSchema,
  v2ProblemResponses,
  type V2InferBody,
} from '@inferq/contracts';
import { AppError } from '@inferq/core';
import type { Pool } from '@inferq/db';
import type { Redis } from '@inferq/queue';
import type { FastifyRequest } from 'fastify';
import type { ApiMetrics } from '../metrics/api-metrics.ts';
import { addProblemMember } from '../plugins/error-handler.ts';
import { traceContextOf } from '../plugins/tracing.ts';
import { ownerFilter } from '../services/api-keys-service.ts';
import type { JobsService } from '../services/jobs-service.ts';
import type { JobWaiter } from '../services/job-waiter.ts';
import type { ModelsService } from '../services/models-service.ts';
import { checkInferRequest, jobFailure, modelRef, toInferResponse, toModelMetadata } from '../services/v2-inference.ts';

export interface KserveV2RoutesOptions {
  jobs: JobsService;
  models: ModelsService;
  waiter: JobWaiter;
  metrics: ApiMetrics;
  pool: Pool;
  redis: Redis;
  /** The server version `GET /v2` reports. */
  version: string;
  /** How long an infer request waits for its job (WAIT_MAX_S). */
  waitMaxS: number;
}

const TAG = 'open inference protocol (v2)';
const JSON_ONLY = 'JSON bodies only: the binary tensor data extension is not served.';

export const kserveV2Routes: FastifyPluginAsyncTypebox<KserveV2RoutesOptions> = async (app, o) => {
  // The protocol's error body is `{ "error": "..." }`: every problem from these routes carries it too.
  addProblemMember(app, ({ message }) => message);

  app.get(
    '/v2/health/live',
    {
      schema: { tags: [TAG], summary: 'Server liveness', description: 'The status code is the answer (protocol): 200 live.', response: { 200: V2LiveSchema } },
    },
    async () => ({ live: true }),
  );

  app.get(
    '/v2/health/ready',
    {
      schema: {
        tags: [TAG],
        summary: 'Server readiness',
        description: 'The status code is the answer: 200 when Postgres and Redis answer, else 503 (like `/readyz`; clients read any non-200 as not ready).',
        response: { 200: V2ReadySchema, 503: V2ReadySchema },
      },
    },
    async (_request, reply) => {
      const ok = await Promise.all([o.pool.query('SELECT 1'), o.redis.ping()]).then(
        () => true,
        () => false,
      );
      return reply.status(ok ? 200 : 503).send({ ready: ok });
    },
  );

  app.get(
    '/v2',
    {
      config: { scope: 'jobs:read' },
      schema: { tags: [TAG], summary: 'Server metadata', description: JSON_ONLY, response: { 200: V2ServerMetadataSchema, ...v2ProblemResponses(401, 403) } },
    },
    async () => ({ name: 'inferq', version: o.version, extensions: [] }),
  );

  async function metadata(name: string, version?: string) {
    const model = await o.models.resolveModel(modelRef(name, version));
    const versions = version === undefined ? (await o.models.listVersions(name)).map((m) => m.version) : [model.version];
    return toModelMetadata(model, versions);
  }
  const metadataSchema = {
    tags: [TAG],
    summary: 'Model metadata',
    description: 'Inputs and outputs of the model; -1 marks a dynamic dimension. Without a version: the latest, listing every version.',
    response: { 200: V2ModelMetadataSchema, ...v2ProblemResponses(400, 401, 403, 404) },
  };
  app.get('/v2/models/:name', { config: { scope: 'jobs:read' }, schema: { ...metadataSchema, params: V2ModelParamsSchema } }, async (request) =>
    metadata(request.params.name),
  );
  app.get(
    '/v2/models/:name/versions/:version',
    { config: { scope: 'jobs:read' }, schema: { ...metadataSchema, params: V2ModelVersionParamsSchema } },
    async (request) => metadata(request.params.name, request.params.version),
  );

  async function ready(name: string, version?: string) {
    await o.waiter.requireServed(modelRef(name, version));
    return { ready: true };
  }
  const readySchema = {
    tags: [TAG],
    summary: 'Model readiness',
    description:
      'The status code is the answer: 200 when a live worker serves the model, 503 `MODEL_UNAVAILABLE` when ' +
      "none does (the protocol says 4xx; KServe's own server answers 503 and clients read any non-200 as " +
      'not ready), 404 for an unknown model.',
    response: { 200: V2ReadySchema, ...v2ProblemResponses(400, 401, 403, 404, 503) },
  };
  // GET only: a HEAD 503 would carry no problem body to say why.
  app.get(
    '/v2/models/:name/ready',
    { exposeHeadRoute: false, config: { scope: 'jobs:read' }, schema: { ...readySchema, params: V2ModelParamsSchema } },
    async (request) => ready(request.params.name),
  );
  app.get(
    '/v2/models/:name/versions/:version/ready',
    { exposeHeadRoute: false, config: { scope: 'jobs:read' }, schema: { ...readySchema, params: V2ModelVersionParamsSchema } },
    async (request) => ready(request.params.name, request.params.version),
  );

  async function infer(request: FastifyRequest, body: V2InferBody, name: string, version?: string) {
    const ref = modelRef(name, version);
    const model = await o.models.resolveModel(ref);
    checkInferRequest(body, model.signature);
    await o.waiter.prepare(ref);
    const priority = body.parameters?.priority ?? 'normal';
    const accepted = await o.jobs.submitJob({
      principal: request.principal,
      model: ref,
      inputs: body.inputs.map(({ parameters: _ignored, ...tensor }) => tensor),
      priority,
      metadata: {},
      idempotencyKey: undefined,
      traceContext: traceContextOf(request),
    });
    o.metrics.jobSubmitted(model.name, priority);
    const owner = ownerFilter(request.principal);
    const job = await o.waiter.waitForJob(accepted.id, owner, o.waitMaxS * 1000);
    if (job.status === 'succeeded') return toInferResponse(job, body, o.jobs, owner);
    if (job.status === 'queued' || job.status === 'running') {
      throw new AppError('INFERENCE_TIMEOUT', `job ${job.id} is still ${job.status} after ${o.waitMaxS} s; poll /v1/jobs/${job.id} for its result`, {
        headers: { location: `/v1/jobs/${job.id}` },
      });
    }
    throw jobFailure(job);
  }
  const inferSchema = {
    tags: [TAG],
    summary: 'Run an inference and wait for it',
    description:
      `Submits one job on the model's queue (batched with others like any job) and answers when it ends, ` +
      `waiting at most the server's WAIT_MAX_S. ${JSON_ONLY} \`data\` may be flat or nested; outputs come ` +
      `back flat, row-major. Errors are problem+json with the protocol's \`error\` member: 4xx for a bad ` +
      `request or bad input data, 404 for an unknown model, 503 \`MODEL_UNAVAILABLE\` when no live worker ` +
      `serves the model (nothing is submitted), 504 \`INFERENCE_TIMEOUT\` naming the job (\`Location\`) ` +
      `when it did not finish in time, 5xx with the job's code when the model failed.`,
    body: V2InferBodySchema,
    response: { 200: V2InferResponseSchema, ...v2ProblemResponses(400, 401, 403, 404, 413, 415, 429, 500, 503, 504) },
  };
  app.post('/v2/models/:name/infer', { config: { scope: 'jobs:write' }, schema: { ...inferSchema, params: V2ModelParamsSchema } }, async (request) =>
    infer(request, request.body, request.params.name),
  );
  app.post(
    '/v2/models/:name/versions/:version/infer',
    { config: { scope: 'jobs:write' }, schema: { ...inferSchema, params: V2ModelVersionParamsSchema } },
    async (request) => infer(request, request.body, request.params.name, request.params.version),
  );
};
