import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  GetJobQuerySchema,
  JobAcceptedSchema,
  JobOrFramedJobResponse,
  JobListSchema,
  JobParamsSchema,
  RetryHeadersSchema,
  JobSchema,
  JobTombstoneSchema,
  ListJobsQuerySchema,
  TensorParamsSchema,
  problemResponses,
} from '@inferq/contracts';
import { ownerFilter } from '../services/keys/api-keys-service.ts';
import { toJobDetail, toJobSummary } from '../services/jobs/view/job-view.ts';
import { prefersFramedJob, sendFramedJob } from '../services/jobs/view/job-binary-view.ts';
import type { JobsService } from '../services/jobs/jobs-service.ts';
import type { JobRetention } from '../services/jobs/job-retention-service.ts';
import { auditActor } from '../plugins/auth.ts';
import type { SubmitAndWait } from '../services/jobs/submit-and-wait.ts';
import { jobsSubmitRoutes } from './jobs-submit.ts';
import type { TensorStore } from '@inferq/storage';

export interface JobsRoutesOptions {
  jobs: JobsService;
  /** Submits jobs (and, with `Prefer: wait`, waits for them: at most WAIT_MAX_S). */
  runner: SubmitAndWait;
  retention: Pick<JobRetention, 'deleteJob'>;
  tensors: TensorStore;
  outputUrlTtlS: number;
  /** INPUT_MAX_BYTES, for the submit's multipart parts. */
  inputMaxBytes: number;
}

export const jobsRoutes: FastifyPluginAsyncTypebox<JobsRoutesOptions> = async (app, { jobs, runner, retention, tensors, outputUrlTtlS, inputMaxBytes }) => {
  // Its own scope: the submit's body parsers (framed, multipart) apply to it alone.
  await app.register(jobsSubmitRoutes, { runner, jobs, tensors, outputUrlTtlS, inputMaxBytes });

  app.get(
    '/v1/jobs/:id',
    {
      config: { scope: 'jobs:read' },
      schema: {
        tags: ['jobs'],
        summary: 'Get a job, with its outputs once it has succeeded',
        description:
          'Outputs up to the inline limit carry `data` (JSON values, or base64 with `?encoding=base64`); ' +
          'larger ones carry a short-lived presigned `url` to their raw little-endian bytes. ' +
          'A purged job (retention ran out, or deleted) is 410 `JOB_PURGED`, whose body says when (`purgedAt`), why (`purgeReason`) ' +
          'and what was kept (`job`, the tombstone). ' +
          "A job accepted and then lost with the database's last commits (a failover to an asynchronous standby) is 410 `JOB_LOST` (`lostAt`). " +
          'With `Accept: application/octet-stream` (preferred to `application/json` by q-value) the answer is the job in the binary framing: ' +
          '`Inference-Header-Content-Length` bytes of job JSON, outputs with `parameters.binary_data_size`, then their raw bytes in order.',
        params: JobParamsSchema,
        querystring: GetJobQuerySchema,
        response: { 200: JobOrFramedJobResponse, ...problemResponses(400, 401, 403, 404, 410) },
      },
    },
    async (request, reply) => {
      const job = await jobs.getJob(request.params.id, ownerFilter(request.principal));
      reply.header('vary', 'Accept');
      if (prefersFramedJob(request.raw)) return sendFramedJob(reply, job, tensors);
      return toJobDetail(job, tensors, outputUrlTtlS, request.query.encoding ?? 'json');
    },
  );

  app.get(
    '/v1/jobs',
    {
      config: { scope: 'jobs:read' },
      schema: {
        tags: ['jobs'],
        summary: "List the caller's jobs, newest first",
        description: 'Cursor pagination: pass `nextCursor` back as `cursor` until it is null. Purged jobs are listed as tombstones, with `purgedAt`.',
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
        description:
          'Only a queued job can be canceled (409 `JOB_NOT_CANCELABLE` otherwise): one a worker holds in a batch not yet marked ' +
          'running is canceled too, and the result it computes is not stored. Canceling twice is harmless.',
        params: JobParamsSchema,
        response: { 200: JobSchema, ...problemResponses(400, 401, 403, 404, 409, 410) },
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
        description:
          'A new job with the same model version, priority, inputs and metadata as this one, owned by the caller; typically to re-run a failed job. ' +
          '410 `JOB_INPUTS_DROPPED` once its inputs were dropped (input retention), `JOB_PURGED` once it was purged. ' +
          'With an `Idempotency-Key`, a second call with the same key answers the job the first created (409 `IDEMPOTENCY_CONFLICT` ' +
          'when that key retried another job), so a retry that got no answer can be sent again safely.',
        params: JobParamsSchema,
        headers: RetryHeadersSchema,
        response: { 202: JobAcceptedSchema, ...problemResponses(400, 401, 403, 404, 409, 410, 503) },
      },
    },
    async (request, reply) => {
      const accepted = await jobs.retryJob(request.params.id, request.principal, request.headers['idempotency-key']);
      return reply.status(202).header('location', accepted.links.self).send(accepted);
    },
  );

  app.delete(
    '/v1/jobs/:id',
    {
      config: { scope: 'jobs:write' },
      schema: {
        tags: ['jobs'],
        summary: 'Delete a job: purge its data now',
        description:
          "The job's inputs, outputs, metadata, webhook URL and error message are deleted (S3 objects included) and it becomes a tombstone, " +
          'as when its retention runs out: it stays in lists and usage, and reading it answers 410 `JOB_PURGED`. A queued job is canceled ' +
          'first; a running one is refused with 409 `JOB_RUNNING` and `Retry-After` (delete it once it has finished). Its owner or an admin; ' +
          'deleting a tombstone again answers it. Audited as `job:deleted`. Answers the tombstone.',
        params: JobParamsSchema,
        response: { 200: JobTombstoneSchema, ...problemResponses(400, 401, 403, 404, 409, 410) },
      },
    },
    async (request) => {
      const job = await retention.deleteJob(request.params.id, request.principal, auditActor(request));
      return toJobSummary(job);
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
          description:
            'The little-endian bytes of the tensor, row-major; `x-tensor-datatype` and `x-tensor-shape` headers describe them. ' +
            '410 `JOB_PURGED` for a purged job; an input after the input retention is 410 `JOB_INPUTS_DROPPED` (with `inputsDroppedAt`).',
          params: TensorParamsSchema,
          produces: ['application/octet-stream'],
          response: {
            200: Type.Unsafe<NodeJS.ReadableStream>({ type: 'string', format: 'binary', description: 'Raw tensor bytes' }),
            ...problemResponses(400, 401, 403, 404, 410),
          },
        },
      },
      async (request, reply) => {
        const { tensor, body } = await jobs.openTensor(request.params.id, ownerFilter(request.principal), kind, request.params.index);
        return reply
          .type('application/octet-stream')
          .header('x-tensor-datatype', tensor.datatype)
          .header('x-tensor-shape', tensor.shape.join(','))
          .header('content-disposition', `attachment; filename="${request.params.id}-${kind}-${request.params.index}.bin"`)
          .header('content-length', tensor.bytes)
          .send(body);
      },
    );
  }
};
