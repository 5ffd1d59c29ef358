import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { BatchParamsSchema, BatchSchema, UsageQuerySchema, UsageSchema, problemResponses } from '@inferq/contracts';
import { ownerFilter } from '../services/keys/api-keys-service.ts';
import type { UsageService } from '../services/system/usage-service.ts';

/** Batch provenance and device-time accounting (services/system/usage-service.ts). */
export const usageRoutes: FastifyPluginAsyncTypebox<{ usage: UsageService }> = async (app, { usage }) => {
  app.get(
    '/v1/inference-batches/:id',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['usage'],
        summary: 'A batch a worker ran, with its jobs (admin)',
        description:
          'Where it ran (worker, device, execution provider, model artifact sha256), its size in jobs and ' +
          "items, its device time, and each job's share of it. A job names its batch in `batchId`. Formerly " +
          'GET /v1/batches/:id, now the Batch API; a UUID there answers 308 to this path for one release.',
        params: BatchParamsSchema,
        response: { 200: BatchSchema, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request) => usage.findBatch(request.params.id),
  );

  app.get(
    '/v1/usage',
    {
      config: { scope: 'jobs:read' },
      schema: {
        tags: ['usage'],
        summary: 'Device time per API key or per model version, for chargeback',
        description:
          "Each batch's device time is split over its jobs by their share of its items (rows along the batch " +
          'dimension) and summed over the jobs that succeeded in [from, to). Cache hits ran nothing and cost ' +
          'nothing; failed jobs are not charged. An admin key sees every key; any other key sees its own jobs.',
        querystring: UsageQuerySchema,
        response: { 200: UsageSchema, ...problemResponses(400, 401, 403) },
      },
    },
    async (request) => usage.readUsage(request.query, ownerFilter(request.principal)),
  );
};
