import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { BatchParamsSchema, BatchSchema, UsageQuerySchema, UsageSchema, problemResponses } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import { findBatch, readUsage, type Pool } from '@inferq/db';
import { ownerFilter } from '../services/api-keys-service.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Batch provenance and device-time accounting, read straight from Postgres. */
export const usageRoutes: FastifyPluginAsyncTypebox<{ pool: Pool }> = async (app, { pool }) => {
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
    async (request) => {
      const batch = await findBatch(pool, request.params.id);
      if (!batch) throw new AppError('NOT_FOUND', `batch ${request.params.id} does not exist`);
      return batch;
    },
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
    async (request) => {
      const to = request.query.to ? new Date(request.query.to) : new Date();
      const from = request.query.from ? new Date(request.query.from) : new Date(to.getTime() - DAY_MS);
      if (!(from < to)) {
        throw new AppError('VALIDATION_FAILED', '`from` must be before `to`', {
          errors: [{ pointer: '/querystring/from', code: 'VALIDATION_FAILED', detail: 'must be before to' }],
        });
      }
      const groupBy = request.query.groupBy ?? 'key';
      const usage = await readUsage(pool, { from, to, groupBy, ownerKeyId: ownerFilter(request.principal) });
      return { from: from.toISOString(), to: to.toISOString(), groupBy, ...usage };
    },
  );
};
