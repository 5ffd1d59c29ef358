import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  BulkBatchListSchema,
  BulkBatchSchema,
  CreateBulkBatchBodySchema,
  FileDeletedSchema,
  FileListSchema,
  FileObjectSchema,
  FileParamsSchema,
  ListBulkBatchesQuerySchema,
  ListFilesQuerySchema,
} from '@inferq/contracts';
import { AppError } from '@inferq/core';
import type { BatchesService } from '../batch-api/batches-service.ts';
import type { FilesService } from '../batch-api/files-service.ts';
import { openAiProblems, registerOpenAiErrors } from '../plugins/openai-errors.ts';

const BATCH_ID_OR_UUID = Type.Object({
  id: Type.String({ pattern: '^(batch_[0-9a-f]{32}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$' }),
});
const BATCH_ID = Type.Object({ id: Type.String({ pattern: '^batch_[0-9a-f]{32}$' }) });

export interface OpenAiBatchRoutesOptions {
  files: FilesService;
  batches: BatchesService;
  /** BATCH_FILE_MAX_BYTES */
  fileMaxBytes: number;
}

/** The Batch API in OpenAI's shapes: files of requests, batches over them, their output and error files. */
export const openAiBatchRoutes: FastifyPluginAsyncTypebox<OpenAiBatchRoutesOptions> = async (app, { files, batches, fileMaxBytes }) => {
  registerOpenAiErrors(app);

  app.post(
    '/v1/files',
    {
      config: { scope: 'jobs:write' },
      schema: {
        tags: ['batches'],
        summary: 'Upload a file of batch requests (OpenAI-compatible)',
        description:
          'multipart/form-data with `purpose` (`batch`) and `file`: JSONL, one request a line, ' +
          '`{"custom_id", "method": "POST", "url": "/v1/jobs", "body": <a POST /v1/jobs body>}` (or `/v1/embeddings` and its body). ' +
          'The file is streamed to object ' +
          'storage as it arrives (never held in memory), up to BATCH_FILE_MAX_BYTES (413 `PAYLOAD_TOO_LARGE`); its lines are ' +
          'checked when a batch is created over it. Optional `expires_after[anchor]` (`created_at`) and `expires_after[seconds]` ' +
          '(3600–2592000) set when it is deleted; without them, BATCH_FILE_EXPIRES_S after the upload (30 days; 0: kept until deleted). ' +
          'A file a batch still reads stays until that batch ends.',
        consumes: ['multipart/form-data'],
        response: { 200: FileObjectSchema, ...openAiProblems(400, 401, 403, 413, 415, 429, 503) },
      },
    },
    async (request) => {
      if (!request.isMultipart()) throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'send the file as multipart/form-data with `purpose` and `file`');
      return files.upload(request.principal, request.parts({ limits: { files: 1, fields: 8, fileSize: fileMaxBytes } }));
    },
  );

  app.get(
    '/v1/files',
    {
      config: { scope: 'jobs:read' },
      schema: {
        tags: ['batches'],
        summary: "List the key's files, newest first",
        querystring: ListFilesQuerySchema,
        response: { 200: FileListSchema, ...openAiProblems(400, 401, 403) },
      },
    },
    async (request) => files.list(request.principal, request.query),
  );

  app.get(
    '/v1/files/:id',
    {
      config: { scope: 'jobs:read' },
      schema: { tags: ['batches'], summary: 'A file', params: FileParamsSchema, response: { 200: FileObjectSchema, ...openAiProblems(400, 401, 403, 404) } },
    },
    async (request) => files.get(request.principal, request.params.id),
  );

  app.get(
    '/v1/files/:id/content',
    {
      config: { scope: 'jobs:read' },
      schema: {
        tags: ['batches'],
        summary: "A file's bytes (JSONL), streamed",
        params: FileParamsSchema,
        produces: ['application/jsonl'],
        response: { 200: Type.Unsafe<NodeJS.ReadableStream>({ type: 'string', description: 'The JSONL' }), ...openAiProblems(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { file, body } = await files.content(request.principal, request.params.id);
      return reply.type('application/jsonl').header('content-length', file.bytes).send(body);
    },
  );

  app.delete(
    '/v1/files/:id',
    {
      config: { scope: 'jobs:write' },
      schema: {
        tags: ['batches'],
        summary: 'Delete a file',
        description: '409 `FILE_IN_USE` while a batch that has not ended reads it.',
        params: FileParamsSchema,
        response: { 200: FileDeletedSchema, ...openAiProblems(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      await files.remove(request.principal, request.params.id);
      return { id: request.params.id, object: 'file' as const, deleted: true as const };
    },
  );

  app.post(
    '/v1/batches',
    {
      config: { scope: 'jobs:write' },
      schema: {
        tags: ['batches'],
        summary: 'Create a batch over a file of requests (OpenAI-compatible)',
        description:
          'Answers the batch `validating`. Then every line is checked (a file with a bad line, a repeated `custom_id` or no ' +
          'line ends `failed`, with `errors`); each line is submitted as a job (an embeddings line: one a text) at priority `low`, ' +
          'at most BATCH_JOBS_IN_FLIGHT ' +
          'of the batch unfinished at once; when all have ended, the output file holds one line per succeeded request and ' +
          'the error file one per other, each keyed by `custom_id`. Past `completion_window` the batch ends `expired`, with ' +
          'what was done so far.',
        body: CreateBulkBatchBodySchema,
        response: { 200: BulkBatchSchema, ...openAiProblems(400, 401, 403, 404, 429) },
      },
    },
    async (request) => batches.create(request.principal, request.body),
  );

  app.get(
    '/v1/batches',
    {
      config: { scope: 'jobs:read' },
      schema: {
        tags: ['batches'],
        summary: "List the key's batches, newest first",
        querystring: ListBulkBatchesQuerySchema,
        response: { 200: BulkBatchListSchema, ...openAiProblems(400, 401, 403) },
      },
    },
    async (request) => batches.list(request.principal, request.query),
  );

  app.get(
    '/v1/batches/:id',
    {
      config: { scope: 'jobs:read' },
      schema: {
        tags: ['batches'],
        summary: 'A batch, with its request counts',
        description:
          'A UUID here is an inference batch a worker ran: until the next release that answers 308 to ' +
          '`/v1/inference-batches/:id`, where its provenance moved.',
        params: BATCH_ID_OR_UUID,
        response: { 200: BulkBatchSchema, 308: Type.Null(), ...openAiProblems(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      if (!id.startsWith('batch_')) return reply.redirect(`/v1/inference-batches/${id}`, 308);
      return batches.get(request.principal, id);
    },
  );

  app.post(
    '/v1/batches/:id/cancel',
    {
      config: { scope: 'jobs:write' },
      schema: {
        tags: ['batches'],
        summary: 'Cancel a batch',
        description:
          'Answers the batch `cancelling`; its queued jobs are canceled, running ones finish, and it ends `cancelled` with ' +
          'the files of what was done. 409 `BATCH_NOT_CANCELABLE` once it has ended.',
        params: BATCH_ID,
        response: { 200: BulkBatchSchema, ...openAiProblems(400, 401, 403, 404, 409) },
      },
    },
    async (request) => batches.cancel(request.principal, request.params.id),
  );
};
