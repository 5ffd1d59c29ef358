import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Multipart } from '@fastify/multipart';
import {
  JobAcceptedSchema,
  JobOrFramedJobResponse,
  SubmitJobBodySchema,
  SubmitJobHeadersSchema,
  preferredWaitSeconds,
  problemResponses,
  type SubmitJobBody,
} from '@inferq/contracts';
import type { TensorStore } from '@inferq/storage';
import type { FastifyRequest } from 'fastify';
import { binaryBodyOf, registerBinaryBody } from '../plugins/binary-body.ts';
import { traceContextOf } from '../plugins/tracing.ts';
import { prefersFramedJob, sendFramedJob } from '../services/jobs/view/job-binary-view.ts';
import { toJobDetail } from '../services/jobs/view/job-view.ts';
import { newJobSlot, type JobsService } from '../services/jobs/jobs-service.ts';
import { readRequestPart, streamInputParts } from '../services/jobs/intake/multipart-submit.ts';
import { submitTensors } from '../services/jobs/intake/submit-body.ts';
import type { SubmitAndWait } from '../services/jobs/submit-and-wait.ts';

export interface JobsSubmitRoutesOptions {
  /** Submits jobs (and, with `Prefer: wait`, waits for them: at most WAIT_MAX_S). */
  runner: SubmitAndWait;
  /** Checks a multipart submit before its parts are stored. */
  jobs: Pick<JobsService, 'checkSubmit'>;
  tensors: TensorStore;
  outputUrlTtlS: number;
  /** INPUT_MAX_BYTES: a multipart part's size limit, and the declared sizes' before any part is read. */
  inputMaxBytes: number;
}

/** The most parts a multipart submit has: `request` and one per input. */
const MAX_PARTS = 1 + 64;

const BODY_FORMS =
  'The body is JSON; or framed as the Open Inference Protocol binary data extension (`Content-Type: application/octet-stream` ' +
  'and `Inference-Header-Content-Length: <n>`: n bytes of this JSON, in which binary inputs carry `parameters.binary_data_size` ' +
  'instead of `data`, then their raw little-endian bytes in input order); or multipart/form-data: a `request` part with this JSON, ' +
  'then one part `input:<name>` per input without `data`, holding its raw bytes (streamed to storage as it arrives). ' +
  'An input may name an upload (`upload`: its id from POST /v1/uploads) instead.';

export const jobsSubmitRoutes: FastifyPluginAsyncTypebox<JobsSubmitRoutesOptions> = async (app, { runner, jobs, tensors, outputUrlTtlS, inputMaxBytes }) => {
  registerBinaryBody(app);
  /** A multipart submit's parts after `request`, read by the handler once the body is validated. */
  const pendingParts = new WeakMap<FastifyRequest, AsyncIterator<Multipart>>();
  const parseJson = (text: string): unknown => {
    let result: { err: Error | null; value?: unknown } = { err: null };
    // Fastify's own JSON parser answers through the callback, at once; its type also allows a promise, which it never returns.
    void app.getDefaultJsonParser('error', 'error')(undefined as never, text, (err, value) => (result = { err, value }));
    if (result.err) throw result.err;
    return result.value;
  };

  // A multipart body has no `request.body` until its `request` part is read: read it before validation, leave the rest streaming.
  app.addHook('preValidation', async (request) => {
    if (!request.isMultipart()) return;
    const limits = { parts: MAX_PARTS, files: MAX_PARTS, fields: 1, fieldSize: request.routeOptions.bodyLimit, fileSize: inputMaxBytes };
    const parts = request.parts({ limits })[Symbol.asyncIterator]();
    request.body = await readRequestPart(parts, parseJson);
    pendingParts.set(request, parts);
  });

  const inputsOf = async (request: FastifyRequest, body: SubmitJobBody, slot: ReturnType<typeof newJobSlot>) => {
    const parts = pendingParts.get(request);
    if (parts) return streamInputParts(parts, body.inputs, { tensors, slot, inputMaxBytes, request: request.raw });
    return submitTensors(body.inputs, binaryBodyOf(request)?.binary);
  };

  app.post(
    '/v1/jobs',
    {
      config: { scope: 'jobs:write' },
      schema: {
        tags: ['jobs'],
        summary: 'Submit an inference job',
        description:
          'Validates the input tensors against the model signature, records the job and queues it. Answers 202 at once; poll the job for its result. ' +
          'A repeated `Idempotency-Key` returns the same job. With `Prefer: wait=N` the reply waits up to N seconds and is 200 with the finished job ' +
          'when it ends in time; with `Accept: application/octet-stream` too, that job in the binary framing (as `GET /v1/jobs/:id` answers it). ' +
          `429 \`QUEUE_FULL\` when the model's backlog is at its limit; 503 \`QUEUE_UNAVAILABLE\` with Retry-After when the queue cannot ` +
          'take it (nothing is kept: send it again, under the same Idempotency-Key). A queue write left unanswered for ' +
          '`SUBMIT_QUEUE_TIMEOUT_MS` (a Redis failover) is answered 202: the job is recorded and queued once Redis takes writes. ' +
          BODY_FORMS,
        headers: SubmitJobHeadersSchema,
        body: SubmitJobBodySchema,
        consumes: ['application/json', 'application/octet-stream', 'multipart/form-data'],
        response: { 200: JobOrFramedJobResponse, 202: JobAcceptedSchema, ...problemResponses(400, 401, 403, 404, 409, 410, 413, 415, 429, 503) },
      },
    },
    async (request, reply) => {
      const { model, priority = 'normal', metadata = {}, deadline, webhook, keepInputs } = request.body;
      const slot = newJobSlot();
      const request_ = {
        principal: request.principal,
        model,
        priority,
        metadata,
        deadline,
        webhookUrl: webhook?.url,
        keepInputs,
        idempotencyKey: request.headers['idempotency-key'],
        routingKey: request.headers['x-routing-key'],
        traceContext: traceContextOf(request),
      };
      // A multipart body's parts are stored as they are read: every check that needs no bytes passes first.
      if (pendingParts.has(request)) await jobs.checkSubmit({ ...request_, inputs: request.body.inputs });
      const submission = { ...request_, inputs: await inputsOf(request, request.body, slot), slot };
      const preferredS = preferredWaitSeconds(request.headers.prefer);
      const waitS = preferredS === undefined ? undefined : runner.waitSeconds(preferredS);
      const waited = waitS === undefined ? undefined : await runner.submitAndWaitOne(submission, waitS);
      const accepted = waited?.accepted ?? (await runner.submit(submission));
      request.log.debug({ jobId: accepted.id, model }, 'job accepted');
      reply.header('location', accepted.links.self);
      if (!waited) return reply.status(202).send(accepted);
      reply.header('preference-applied', `wait=${waitS}`).header('vary', 'Accept, Prefer');
      if (!waited.ended) return reply.status(202).send({ ...accepted, status: waited.job.status });
      if (prefersFramedJob(request.raw)) return sendFramedJob(reply, waited.job, tensors);
      return toJobDetail(waited.job, tensors, outputUrlTtlS, 'json');
    },
  );
};
