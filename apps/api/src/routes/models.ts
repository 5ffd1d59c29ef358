import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ModelListSchema,
  ModelParamsSchema,
  ModelRoutingBodySchema,
  ModelRoutingParamsSchema,
  ModelRoutingSchema,
  ModelSchema,
  ModelUploadFieldsSchema,
  problemResponses,
} from '@inferq/contracts';
import { AppError } from '@inferq/core';
import type { ModelRecord } from '@inferq/db';
import { auditActor } from '../plugins/auth.ts';
import { validationError } from '../plugins/error-handler.ts';
import type { ModelsService } from '../services/models-service.ts';

const toModel = ({ id: _id, artifactKey: _key, tokenizerKey: _tokenizer, ...model }: ModelRecord) => model;

export const modelsRoutes: FastifyPluginAsyncTypebox<{ models: ModelsService; uploadLimitBytes: number }> = async (app, { models, uploadLimitBytes }) => {
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
      schema: { tags: ['models'], summary: 'List models (latest version of each)', response: { 200: ModelListSchema, ...problemResponses(401, 403) } },
    },
    async () => ({ items: (await models.listModels()).map(toModel) }),
  );

  app.get(
    '/v1/models/:name',
    {
      config: { scope: 'jobs:read' },
      schema: {
        tags: ['models'],
        summary: 'Get the latest version of a model, or `name:version` for one version',
        params: ModelParamsSchema,
        response: { 200: ModelSchema, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request) => toModel(await models.describeModel(request.params.name)),
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
      return { items: versions.map(toModel) };
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
