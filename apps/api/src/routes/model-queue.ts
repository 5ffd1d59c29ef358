import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ModelQueueSchema, ModelRoutingParamsSchema, problemResponses } from '@inferq/contracts';
import { auditActor } from '../plugins/auth.ts';
import type { QueueControl } from '../services/models/queue-control.ts';

const PAUSE_DESCRIPTION =
  'Workers stop starting jobs of the model (every version); submissions are still accepted (202) and kept queued, in order, ' +
  'and `Prefer: wait` answers 202 with the job still queued when its wait ends. Jobs already running finish. ' +
  'Idempotent: pausing a paused queue changes nothing. Audited as `model:paused` when it changes the state. ' +
  '`/v1/stats` and the `inferq_queue_paused` metric show the state. Recorded in Postgres: a Redis that loses its data gets the pause back ' +
  "from the workers' reconciler; a 503 `QUEUE_UNAVAILABLE` still recorded it, and a retry is safe.";
const RESUME_DESCRIPTION = 'Workers start the queued jobs again, in their order. Idempotent. Audited as `model:resumed` when it changes the state.';

/** An operator's pause and resume of a model's queue. */
export const modelQueueRoutes: FastifyPluginAsyncTypebox<{ queues: QueueControl }> = async (app, { queues }) => {
  app.post(
    '/v1/models/:name/pause',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['models'],
        summary: "Pause a model's queue",
        description: PAUSE_DESCRIPTION,
        params: ModelRoutingParamsSchema,
        response: { 200: ModelQueueSchema, ...problemResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => {
      const queue = await queues.pause(request.params.name, auditActor(request));
      request.log.info({ model: queue.model }, 'model queue paused');
      return queue;
    },
  );

  app.post(
    '/v1/models/:name/resume',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['models'],
        summary: "Resume a paused model's queue",
        description: RESUME_DESCRIPTION,
        params: ModelRoutingParamsSchema,
        response: { 200: ModelQueueSchema, ...problemResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => {
      const queue = await queues.resume(request.params.name, auditActor(request));
      request.log.info({ model: queue.model }, 'model queue resumed');
      return queue;
    },
  );
};
