import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Value } from '@sinclair/typebox/value';
import { ModelListSchema, ModelParamsSchema, ModelSchema, ModelUploadFieldsSchema, problemResponses } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import type { ModelRecord } from '@inferq/db';
import type { ModelsService } from '../services/models-service.ts';

const toModel = ({ id: _id, artifactKey: _key, ...model }: ModelRecord) => model;

export const modelsRoutes: FastifyPluginAsyncTypebox<{ models: ModelsService; uploadLimitBytes: number }> = async (app, { models, uploadLimitBytes }) => {
  app.post('/v1/models', {
    config: { scope: 'models:write' },
    schema: {
      tags: ['models'],
      summary: 'Register an ONNX model (multipart upload)',
      description: 'multipart/form-data with a `file` part (the .onnx file) and text fields `name`, optional `maxBatchSize` and `maxBatchDelayMs`. Uploading under an existing name creates the next version. The signature is read from the ONNX protobuf.',
      consumes: ['multipart/form-data'],
      response: { 201: ModelSchema, ...problemResponses(400, 401, 403, 413, 415, 422) },
    },
  }, async (request, reply) => {
    if (!request.isMultipart()) throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'send the model as multipart/form-data');
    const fields: Record<string, string> = {};
    let bytes: Buffer | undefined;
    for await (const part of request.parts({ limits: { fileSize: uploadLimitBytes, files: 1, fields: 10 } })) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file') throw new AppError('VALIDATION_FAILED', `unexpected file field "${part.fieldname}"; use "file"`);
        bytes = await part.toBuffer();
      } else fields[part.fieldname] = String(part.value);
    }
    if (!bytes) throw new AppError('VALIDATION_FAILED', 'the "file" part with the .onnx model is missing', { errors: [{ pointer: '/body/file', code: 'VALIDATION_FAILED', detail: 'required' }] });
    const parsed = Value.Convert(ModelUploadFieldsSchema, fields);
    const errors = [...Value.Errors(ModelUploadFieldsSchema, parsed)].map((e) => ({ pointer: `/body${e.path}`, code: 'VALIDATION_FAILED', detail: e.message }));
    if (errors.length > 0) throw new AppError('VALIDATION_FAILED', errors.map((e) => `${e.pointer} ${e.detail}`).join('; '), { errors });
    const { name, maxBatchSize, maxBatchDelayMs } = parsed as typeof ModelUploadFieldsSchema.static;
    const model = await models.registerModel({ name, bytes, batching: { maxBatchSize, maxBatchDelayMs }, createdBy: request.principal.keyId });
    request.log.info({ model: model.name, modelVersion: model.version, sizeBytes: model.sizeBytes }, 'model registered');
    return reply.status(201).send(toModel(model));
  });

  app.get('/v1/models', {
    config: { scope: 'jobs:read' },
    schema: { tags: ['models'], summary: 'List models (latest version of each)', response: { 200: ModelListSchema, ...problemResponses(401, 403) } },
  }, async () => ({ items: (await models.listModels()).map(toModel) }));

  app.get('/v1/models/:name', {
    config: { scope: 'jobs:read' },
    schema: {
      tags: ['models'],
      summary: 'Get the latest version of a model',
      params: ModelParamsSchema,
      response: { 200: ModelSchema, ...problemResponses(400, 401, 403, 404) },
    },
  }, async (request) => toModel(await models.resolveModel(request.params.name)));
};
