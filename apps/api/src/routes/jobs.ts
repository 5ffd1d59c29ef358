import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  GetJobQuerySchema,
  JobAcceptedSchema,
  JobListSchema,
  JobParamsSchema,
  JobSchema,
  ListJobsQuerySchema,
  SubmitJobBodySchema,
  SubmitJobHeadersSchema,
  TensorParamsSchema,
  preferredWaitSeconds,
  problemResponses,
} from '@inferq/contracts';
import { traceContextOf } from '../plugins/tracing.ts';
import { ownerFilter } from '../services/api-keys-service.ts';
import { toJobDetail, toJobSummary } from '../services/job-view.ts';
import type { JobsService } from '../services/jobs-service.ts';
import type { JobWaiter } from '../services/job-waiter.ts';
import type { ApiMetrics } from '../metrics/api-metrics.ts';
import type { Storage } from '@inferq/storage';

export interface JobsRoutesOptions {
  jobs: JobsService;
  waiter: JobWaiter;
  metrics: ApiMetrics;
  storage: Storage;
  outputUrlTtlS: number;
  /** The longest `Prefer: wait` honoured. */
  waitMaxS: number;
}

export const jobsRoutes: FastifyPluginAsyncTypebox<JobsRoutesOptions> = async (app, { jobs, waiter, metrics, storage, outputUrlTtlS, waitMaxS }) => {
  app.post(
    '/v1/jobs',
    {
      config: { scope: 'jobs:write' },
      schema: {
        tags: ['jobs'],
        summary: 'Submit an inference job',
        description:
          "Validates the input tensors against the model signature, records the job and queues it. Answers 202 at once; poll the job for its result. A repeated `Idempotency-Key` returns the same job. With `Prefer: wait=N` the reply waits up to N seconds and is 200 with the finished job when it ends in time. 429 `QUEUE_FULL` when the model's backlog is at its limit.",
        headers: SubmitJobHeadersSchema,
        body: SubmitJobBodySchema,
        response: { 200: JobSchema, 202: JobAcceptedSchema, ...problemResponses(400, 401, 403, 404, 409, 413, 415, 429, 503) },
      },
    },
    async (request, reply) => {
      const { model, inputs, priority = 'normal', metadata = {}, deadline, webhook } = request.body;
      const waitS = preferredWaitSeconds(request.headers.prefer);
      if (waitS !== undefined) await waiter.prepare(model);
      const accepted = await jobs.submitJob({
        principal: request.principal,
        model,
        inputs,
        priority,
        metadata,
        deadline,
        webhookUrl: webhook?.url,
        idempotencyKey: request.headers['idempotency-key'],
        routingKey: request.headers['x-routing-key'],
        traceContext: traceContextOf(request),
      });
      request.log.debug({ jobId: accepted.id, model }, 'job accepted');
      metrics.jobSubmitted(model.split(':')[0]!, priority);
      reply.header('location', accepted.links.self);
      if (waitS === undefined) return reply.status(202).send(accepted);
      const applied = Math.min(waitS, waitMaxS);
      const job = await waiter.waitForJob(accepted.id, ownerFilter(request.principal), applied * 1000);
      reply.header('preference-applied', `wait=${applied}`);
      if (job.status === 'queued' || job.status === 'running') return reply.status(202).send({ ...accepted, status: job.status });
      return reply.status(200).send(await toJobDetail(job, storage, outputUrlTtlS, 'json'));
    },
  );

  app.get(
    '/v1/jobs/:id',
    {
      config: { scope: 'jobs:read' },
      schema: {
        tags: ['jobs'],
        summary: 'Get a job, with its outputs once it has succeeded',
        description:
          'Outputs up to the inline limit carry `data` (JSON values, or base64 with `?encoding=base64`); larger ones carry a short-lived presigned `url` to their raw little-endian bytes.',
        params: JobParamsSchema,
        querystring: GetJobQuerySchema,
        response: { 200: JobSchema, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const job = await jobs.getJob(request.params.id, ownerFilter(request.principal));
      return toJobDetail(job, storage, outputUrlTtlS, request.query.encoding ?? 'json');
    },
  );

  app.get(
    '/v1/jobs',
    {
      config: { scope: 'jobs:read' },
      schema: {
        tags: ['jobs'],
        summary: "List the caller's jobs, newest first",
        description: 'Cursor pagination: pass `nextCursor` back as `cursor` until it is null.',
        querystring: ListJobsQuerySchema,
        response: { 200: JobListSchema, ...problemResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const page = await jobs.listJobs(request.query, ownerFilter(request.principal));
      return { items: page.items.map(toJobSummary), nextCursor: page.nextCursor };
    },
  );

  app.post(
    '/v1/jobs/:id/cancel',
    {
      config: { scope: 'jobs:write' },
      schema: {
        tags: ['jobs'],
        summary: 'Cancel a queued job',
        description: 'Only a queued job can be canceled (409 `JOB_NOT_CANCELABLE` otherwise). Canceling twice is harmless.',
        params: JobParamsSchema,
        response: { 200: JobSchema, ...problemResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => toJobSummary(await jobs.cancelJob(request.params.id, ownerFilter(request.principal))),
  );

  app.post(
    '/v1/jobs/:id/retry',
    {
      config: { scope: 'jobs:write' },
      schema: {
        tags: ['jobs'],
        summary: 'Submit a job again',
        description: 'A new job with the same model version, priority, inputs and metadata as this one, owned by the caller; typically to re-run a failed job.',
        params: JobParamsSchema,
        response: { 202: JobAcceptedSchema, ...problemResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request, reply) => {
      const accepted = await jobs.retryJob(request.params.id, request.principal);
      return reply.status(202).header('location', accepted.links.self).send(accepted);
    },
  );

  for (const kind of ['inputs', 'outputs'] as const) {
    app.get(
      `/v1/jobs/:id/${kind}/:index`,
      {
        config: { scope: 'jobs:read' },
        schema: {
          tags: ['jobs'],
          summary: `Download one ${kind.slice(0, -1)} tensor as raw bytes`,
          description: 'The little-endian bytes of the tensor, row-major; `x-tensor-datatype` and `x-tensor-shape` headers describe them.',
          params: TensorParamsSchema,
          produces: ['application/octet-stream'],
          response: {
            200: Type.Unsafe<Buffer>({ type: 'string', format: 'binary', description: 'Raw tensor bytes' }),
            ...problemResponses(400, 401, 403, 404),
          },
        },
      },
      async (request, reply) => {
        const { tensor, bytes } = await jobs.readTensor(request.params.id, ownerFilter(request.principal), kind, request.params.index);
        return reply
          .type('application/octet-stream')
          .header('x-tensor-datatype', tensor.datatype)
          .header('x-tensor-shape', tensor.shape.join(','))
          .header('content-disposition', `attachment; filename="${request.params.id}-${kind}-${request.params.index}.bin"`)
          .send(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      },
    );
  }
};
