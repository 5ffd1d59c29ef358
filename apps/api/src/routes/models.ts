import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ModelListSchema,
  ModelParamsSchema,
  ModelRetirementSchema,
  ModelRoutingBodySchema,
  ModelRoutingParamsSchema,
  ModelRoutingSchema,
  ModelSchema,
  ModelUploadFieldsSchema,
  problemResponses,
  RetireModelQuerySchema,
} from '@inferq/contracts';
import { AppError } from '@inferq/core';
import { auditActor } from '../plugins/auth.ts';
import { validationError } from '../plugins/error-handler.ts';
import type { ModelRetirementService } from '../services/models/model-retirement.ts';
import type { ModelSettingsService } from '../services/models/model-settings-service.ts';
import type { ModelRecord, ModelsService } from '../services/models/models-service.ts';

const toModel = ({ id: _id, artifactKey: _key, tokenizerKey: _tokenizer, ...model }: ModelRecord) => model;

const RETIRE_DESCRIPTION =
  '`name:version` retires one version, `name` every version. A retired version takes no new job: a submit naming it ' +
  '(`/v1/jobs`, `/v2/models/…/infer`, `/v1/embeddings`, a retry) is answered 410 `MODEL_VERSION_RETIRED`; a name alone ' +
  'runs on its newest version that is not retired, and is answered 410 once every version is. Jobs already queued or ' +
  'running finish, and old jobs keep showing their version. The artifact is kept while any job of the version is queued ' +
  'or running, then deleted from object storage by a sweep (`RETIRED_ARTIFACT_GRACE_MS` after the retirement at the ' +
  'earliest); the row stays, with `retiredAt`. While the routing table gives the version a weight above 0 the call is ' +
  'refused with 409 `MODEL_VERSION_ROUTED`, unless `reroute=true`: then the version leaves the table and the others keep ' +
  'their weights (a table left with no weight above 0 is removed). Idempotent: retiring a retired version changes ' +
  'nothing. Audited as `model:retired` when something changed.';

export interface ModelsRoutesOptions {
  models: ModelsService;
  retirement: ModelRetirementService;
  /** The retention each model read shows (one query per answer). */
  settings: Pick<ModelSettingsService, 'describeRetentions'>;
  uploadLimitBytes: number;
}

export const modelsRoutes: FastifyPluginAsyncTypebox<ModelsRoutesOptions> = async (app, { models, retirement, settings, uploadLimitBytes }) => {
  /** Model views with their name's retention. */
  const withRetention = async (records: ModelRecord[]) => {
    const retentions = await settings.describeRetentions(records.map((m) => m.name));
    return records.map((m) => ({ ...toModel(m), retention: retentions.get(m.name) }));
  };

  app.post(
    '/v1/models',
    {
      config: { scope: 'models:write' },
      schema: {
        tags: ['models'],
        summary: 'Register an ONNX model (multipart upload)',
        description:
          'multipart/form-data with a `file` part (the .onnx file) and text fields `name`, optional ' +
          '`maxBatchSize`, `maxBatchDelayMs`, `batching`, `latencyTargetMs` and `responseCache` (`true`: jobs ' +
          'whose input tensors equal an earlier succeeded job of this version get its stored result, marked ' +
          '`cacheHit`, without running the model; for deterministic models). `batching=auto` lets each worker ' +
          'measure the model on its device and pick the batch size and delay with the most throughput whose p99 ' +
          'queue wait stays under `latencyTargetMs` (default 100; only with `auto`), with `maxBatchSize` and ' +
          '`maxBatchDelayMs` as upper bounds. A model that is not batchable (no dynamic leading dim) is always ' +
          'registered `fixed` with `maxBatchSize` 1. An encoder uploaded with a `tokenizer` part (a Hugging ' +
          'Face tokenizer.json) serves `POST /v1/embeddings`; its fields `pooling` (`mean`, `cls`, `none`), ' +
          '`normalize`, `embeddingOutput` and `maxTokens` are checked against the signature (MODEL_UNSUPPORTED ' +
          'when its inputs are not token tensors). Uploading under an existing name creates the next version. ' +
          'The signature is read from the ONNX protobuf.',
        consumes: ['multipart/form-data'],
        response: { 201: ModelSchema, ...problemResponses(400, 401, 403, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      if (!request.isMultipart()) throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'send the model as multipart/form-data');
      const fields: Record<string, string> = {};
      const files: { file?: Buffer; tokenizer?: Buffer } = {};
      try {
        for await (const part of request.parts({ limits: { fileSize: uploadLimitBytes, files: 2, fields: 20 } })) {
          if (part.type === 'file') {
            if (part.fieldname !== 'file' && part.fieldname !== 'tokenizer')
              throw new AppError('VALIDATION_FAILED', `unexpected file field "${part.fieldname}"; use "file" (and "tokenizer")`);
            if (files[part.fieldname]) throw new AppError('VALIDATION_FAILED', `the "${part.fieldname}" part is given twice`);
            files[part.fieldname] = await part.toBuffer();
          } else fields[part.fieldname] = String(part.value);
        }
      } catch (err) {
        // Ours and @fastify/multipart's errors carry a code; busboy's parse errors (no boundary, body cut short) are bare.
        if (err instanceof Error && !('code' in err)) throw new AppError('MALFORMED_BODY', `the multipart body cannot be read: ${err.message}`);
        throw err;
      }
      if (!files.file)
        throw new AppError('VALIDATION_FAILED', 'the "file" part with the .onnx model is missing', {
          errors: [{ pointer: '/body/file', code: 'VALIDATION_FAILED', detail: 'required' }],
        });
      // The route's Ajv coerces the text fields as it does query strings; TypeBox's Value.Convert would truncate "1.5" and "1e3" to 1.
      const validate = request.compileValidationSchema(ModelUploadFieldsSchema, 'body');
      if (!validate(fields)) throw validationError(validate.errors ?? [], 'body');
      const {
        name,
        maxBatchSize,
        maxBatchDelayMs,
        batching: mode,
        latencyTargetMs,
        responseCache = false,
        ...embedding
      } = fields as unknown as typeof ModelUploadFieldsSchema.static;
      if (latencyTargetMs !== undefined && mode !== 'auto')
        throw new AppError('VALIDATION_FAILED', '"latencyTargetMs" applies to adaptive batching: send "batching=auto" too', {
          errors: [{ pointer: '/body/latencyTargetMs', code: 'VALIDATION_FAILED', detail: 'needs batching=auto' }],
        });
      const stray = Object.keys(embedding)[0];
      if (!files.tokenizer && stray)
        throw new AppError('VALIDATION_FAILED', `"${stray}" applies to embedding models: send their "tokenizer" part too`, {
          errors: [{ pointer: `/body/${stray}`, code: 'VALIDATION_FAILED', detail: 'needs a tokenizer' }],
        });
      const model = await models.registerModel({
        name,
        bytes: files.file,
        batching: { maxBatchSize, maxBatchDelayMs, mode, latencyTargetMs },
        responseCache,
        actor: auditActor(request),
        embedding: files.tokenizer && { ...embedding, tokenizer: files.tokenizer },
      });
      request.log.info({ model: model.name, modelVersion: model.version, sizeBytes: model.sizeBytes }, 'model registered');
      return reply.status(201).send(toModel(model));
    },
  );

  app.get(
    '/v1/models',
    {
      config: { scope: 'jobs:read' },
      schema: {
        tags: ['models'],
        summary: 'List models (latest version of each)',
        description: 'Each with its `retention`: how long its finished jobs are kept, and whether that is its own or the server default.',
        response: { 200: ModelListSchema, ...problemResponses(401, 403) },
      },
    },
    async () => ({ items: await withRetention(await models.listModels()) }),
  );

  app.get(
    '/v1/models/:name',
    {
      config: { scope: 'jobs:read' },
      schema: {
        tags: ['models'],
        summary: 'Get the latest version of a model, or `name:version` for one version',
        description:
          '`retention`: how long finished jobs of the name (every version) are kept: its override `retentionS` (PATCH /v1/models/:name) ' +
          "or null, the `effectiveS` that applies and its `source` (`model`, or `default`: JOB_RETENTION_S, which a key's own retention " +
          'beats for its jobs), and `inputRetentionS`, how long succeeded jobs keep their inputs when that is shorter.',
        params: ModelParamsSchema,
        response: { 200: ModelSchema, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request) => (await withRetention([await models.describeModel(request.params.name)]))[0],
  );

  app.delete(
    '/v1/models/:name',
    {
      config: { scope: 'models:write' },
      schema: {
        tags: ['models'],
        summary: 'Retire a model version (`name:version`), or every version (`name`)',
        description: RETIRE_DESCRIPTION,
        params: ModelParamsSchema,
        querystring: RetireModelQuerySchema,
        response: { 200: ModelRetirementSchema, ...problemResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const retired = await retirement.retire(request.params.name, { reroute: request.query.reroute ?? false }, auditActor(request));
      request.log.info({ model: retired.name, modelVersions: retired.versions.map((v) => v.version), routing: retired.routing }, 'model retired');
      return retired;
    },
  );

  app.get(
    '/v1/models/:name/versions',
    {
      config: { scope: 'jobs:read' },
      schema: {
        tags: ['models'],
        summary: 'List every version of a model, newest first',
        params: ModelRoutingParamsSchema,
        response: { 200: ModelListSchema, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const versions = await models.listVersions(request.params.name);
      if (versions.length === 0) throw new AppError('MODEL_NOT_FOUND', `model "${request.params.name}" is not registered`);
      return { items: await withRetention(versions) };
    },
  );

  app.get(
    '/v1/models/:name/routing',
    {
      config: { scope: 'jobs:read' },
      schema: {
        tags: ['models'],
        summary: "Get a model's routing table (traffic split between versions)",
        description: 'Empty `versions`: no routing, so jobs naming the model without a version run on its latest version.',
        params: ModelRoutingParamsSchema,
        response: { 200: ModelRoutingSchema, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request) => models.getRouting(request.params.name),
  );

  app.put(
    '/v1/models/:name/routing',
    {
      config: { scope: 'models:write' },
      schema: {
        tags: ['models'],
        summary: "Replace a model's routing table",
        description:
          'Jobs naming the model without a version are sent to a version with probability weight / sum of ' +
          'weights (or by `X-Routing-Key`, stickily); `name:version` is never routed. Versions must be ' +
          'registered and distinct, weights non-negative integers with at least one above 0. `[]` removes ' +
          'routing: the latest version serves. Promote: `[{version: N, weight: 100}]`; roll back: put the old ' +
          'table again (the audit log keeps it). Audited as `model:routed`.',
        params: ModelRoutingParamsSchema,
        body: ModelRoutingBodySchema,
        response: { 200: ModelRoutingSchema, ...problemResponses(400, 401, 403, 404, 415) },
      },
    },
    async (request) => {
      const routing = await models.setRouting(request.params.name, request.body.versions, auditActor(request));
      request.log.info({ model: routing.name, routing: routing.versions }, 'model routing set');
      return routing;
    },
  );
};
