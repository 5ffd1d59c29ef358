import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CreateUploadBodySchema, UploadSchema, problemResponses } from '@inferq/contracts';
import type { UploadsService } from '../services/uploads/uploads-service.ts';

export const uploadsRoutes: FastifyPluginAsyncTypebox<{ uploads: Pick<UploadsService, 'create'> }> = async (app, { uploads }) => {
  app.post(
    '/v1/uploads',
    {
      // Uploads are inputs of jobs this key will submit.
      config: { scope: 'jobs:write' },
      schema: {
        tags: ['jobs'],
        summary: 'Upload a large input tensor to object storage',
        description:
          'Answers a presigned URL: PUT the raw little-endian bytes of a tensor of this datatype and shape there (exactly `bytes` of them, ' +
          'with the `headers` given), then name the upload in a job input instead of its data: ' +
          '`{"name": "x", "datatype": "FP32", "shape": [1, 3, 224, 224], "upload": "<id>"}`. An upload is used by one job, and ' +
          "expires unused at `expiresAt`. Submitting a job that names an upload answers 400 `UPLOAD_NOT_FOUND` (unknown, another key's, " +
          "used or expired), `UPLOAD_MISMATCH` (not the input's datatype and shape) or `UPLOAD_INCOMPLETE` (not put, or not all of it).",
        body: CreateUploadBodySchema,
        response: { 201: UploadSchema, ...problemResponses(400, 401, 403, 413, 429, 503) },
      },
    },
    async (request, reply) => reply.status(201).send(await uploads.create(request.principal, request.body)),
  );
};
