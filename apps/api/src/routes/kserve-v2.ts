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
  INFERENCE_HEADER_CONTENT_LENGTH,
  v2Priority,
  v2ProblemResponses,
  type V2InferBody,
} from '@inferq/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { binaryBodyOf, registerBinaryBody } from '../plugins/binary-body.ts';
import { addProblemMember } from '../plugins/error-handler.ts';
import { traceContextOf } from '../plugins/tracing.ts';
import type { JobWaiter } from '../services/jobs/view/job-waiter.ts';
import type { ModelsService } from '../services/models/models-service.ts';
import type { Readiness } from '../services/system/readiness.ts';
import { requireSucceeded, type SubmitAndWait } from '../services/jobs/submit-and-wait.ts';
import {
  checkInferRequest,
  modelRef,
  outputChoice,
  requestedOutputs,
  toInferResponse,
  toModelMetadata,
  toSubmitInputs,
} from '../services/protocols/v2-inference.ts';

export interface KserveV2RoutesOptions {
  models: ModelsService;
  /** Runs an infer request's job, waiting at most WAIT_MAX_S. */
  runner: SubmitAndWait;
  /** Model readiness: whether a live worker serves the model. */
  waiter: Pick<JobWaiter, 'requireServed'>;
  /** Server readiness: the same Postgres and Redis rule as `/readyz`. */
  readiness: Pick<Readiness, 'reachable'>;
  /** The server version `GET /v2` reports. */
  version: string;
}

const TAG = 'open inference protocol (v2)';
/** The protocol extensions served, as `GET /v2` lists them (Triton's names). */
const EXTENSIONS = ['binary_tensor_data'];
const BINARY =
  'Bodies are JSON or the binary tensor data extension: `Inference-Header-Content-Length` bytes of JSON (inputs with ' +
  "`parameters.binary_data_size` instead of `data`), then those inputs' raw little-endian bytes in order " +
  '(application/octet-stream, or no content type as tritonclient sends). Outputs asked for as binary ' +
  '(`parameters.binary_data_output`, per-output `parameters.binary_data`) come back the same way.';

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
      const { ok } = await o.readiness.reachable();
      return reply.status(ok ? 200 : 503).send({ ready: ok });
    },
  );

  app.get(
    '/v2',
    {
      config: { scope: 'jobs:read' },
      schema: {
        tags: [TAG],
        summary: 'Server metadata',
        description: 'Lists the extensions served.',
        response: { 200: V2ServerMetadataSchema, ...v2ProblemResponses(401, 403) },
      },
    },
    async () => ({ name: 'inferq', version: o.version, extensions: EXTENSIONS }),
  );

  async function metadata(name: string, version?: string) {
    const model = await o.models.resolveModel(modelRef(name, version));
    const versions = version === undefined ? (await o.models.listVersions(name)).filter((m) => !m.retiredAt).map((m) => m.version) : [model.version];
    return toModelMetadata(model, versions);
  }
  const metadataSchema = {
    tags: [TAG],
    summary: 'Model metadata',
    description:
      'Inputs and outputs of the model; -1 marks a dynamic dimension. Without a version: the latest, listing every version that is not retired. ' +
      '410 `MODEL_VERSION_RETIRED` for a retired version (or a model whose versions are all retired).',
    response: { 200: V2ModelMetadataSchema, ...v2ProblemResponses(400, 401, 403, 404, 410) },
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
      'not ready), 404 for an unknown model, 410 `MODEL_VERSION_RETIRED` for a retired version.',
    response: { 200: V2ReadySchema, ...v2ProblemResponses(400, 401, 403, 404, 410, 503) },
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

  async function infer(request: FastifyRequest, reply: FastifyReply, body: V2InferBody, name: string, version?: string) {
    const inputs = toSubmitInputs(body, binaryBodyOf(request)?.binary ?? new Uint8Array(0));
    const isBinary = outputChoice(body);
    const ref = modelRef(name, version);
    const model = await o.models.resolveModel(ref);
    checkInferRequest(body, model.signature);
    const waitS = o.runner.waitSeconds();
    const priority = v2Priority(body.parameters?.priority);
    const waited = await o.runner.submitAndWaitOne(
      { principal: request.principal, model: ref, inputs, priority, metadata: {}, idempotencyKey: undefined, traceContext: traceContextOf(request) },
      waitS,
    );
    requireSucceeded([waited], waitS);
    const framed = toInferResponse(waited.job, body, await waited.readOutputs(requestedOutputs(body)), isBinary);
    // Sent as built (the JSON header is the codec's, in Triton's key order): not through the route's serializer.
    if (framed.headerLength !== undefined) reply.header(INFERENCE_HEADER_CONTENT_LENGTH, framed.headerLength);
    return reply.type(framed.contentType).send(Buffer.from(framed.body.buffer, framed.body.byteOffset, framed.body.byteLength));
  }
  const inferSchema = {
    tags: [TAG],
    summary: 'Run an inference and wait for it',
    description:
      `Submits one job on the model's queue (batched with others like any job) and answers when it ends, ` +
      `waiting at most the server's WAIT_MAX_S. ${BINARY} \`data\` may be flat or nested; outputs come ` +
      `back flat, row-major. Errors are problem+json with the protocol's \`error\` member: 4xx for a bad ` +
      `request or bad input data, 404 for an unknown model, 410 \`MODEL_VERSION_RETIRED\` for a retired version ` +
      `(or a model whose versions are all retired), 503 \`MODEL_UNAVAILABLE\` when no live worker ` +
      `serves the model (nothing is submitted), 504 \`INFERENCE_TIMEOUT\` naming the job (\`Location\`) ` +
      `when it did not finish in time, 5xx with the job's code when the model failed.`,
    body: V2InferBodySchema,
    consumes: ['application/json', 'application/octet-stream'],
    produces: ['application/json', 'application/octet-stream'],
    response: { 200: V2InferResponseSchema, ...v2ProblemResponses(400, 401, 403, 404, 410, 413, 415, 429, 500, 503, 504) },
  };
  // The binary extension's body parsers apply to the infer routes only.
  const inferRoutes: FastifyPluginAsyncTypebox = async (scope) => {
    registerBinaryBody(scope);
    scope.post('/v2/models/:name/infer', { config: { scope: 'jobs:write' }, schema: { ...inferSchema, params: V2ModelParamsSchema } }, async (request, reply) =>
      infer(request, reply, request.body, request.params.name),
    );
    scope.post(
      '/v2/models/:name/versions/:version/infer',
      { config: { scope: 'jobs:write' }, schema: { ...inferSchema, params: V2ModelVersionParamsSchema } },
      async (request, reply) => infer(request, reply, request.body, request.params.name, request.params.version),
    );
  };
  await app.register(inferRoutes);
};
