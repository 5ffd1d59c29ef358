import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { PrincipalSchema, StatsQuerySchema, StatsSchema, WorkerListSchema, problemResponses } from '@inferq/contracts';
import { ownerFilter } from '../services/keys/api-keys-service.ts';
import type { StatsService } from '../services/system/stats-service.ts';

/** What the console's overview, workers page and sign-in read. */
export const systemRoutes: FastifyPluginAsyncTypebox<{ stats: StatsService }> = async (app, { stats }) => {
  app.get(
    '/v1/me',
    {
      config: { scope: 'any' },
      schema: { tags: ['system'], summary: "The caller's key: id, scopes, admin, weight", response: { 200: PrincipalSchema, ...problemResponses(401, 403) } },
    },
    async (request) => ({
      keyId: request.principal.keyId,
      scopes: [...request.principal.scopes],
      admin: request.principal.isAdmin,
      weight: request.principal.weight,
    }),
  );

  app.get(
    '/v1/stats',
    {
      config: { scope: 'jobs:read' },
      schema: {
        tags: ['system'],
        summary: 'Throughput, latency, queue depth and workers',
        description:
          "Job figures cover the caller's jobs (every job for an admin key); queue depth and workers are " +
          'system-wide. Percentiles are over the jobs finished in the window; rates over the last minute.',
        querystring: StatsQuerySchema,
        response: { 200: StatsSchema, ...problemResponses(400, 401, 403) },
      },
    },
    async (request) => stats.readStats(request.query.windowMinutes ?? 15, ownerFilter(request.principal)),
  );

  app.get(
    '/v1/workers',
    {
      config: { scope: 'jobs:read' },
      schema: { tags: ['system'], summary: 'Live worker processes, from their heartbeats', response: { 200: WorkerListSchema, ...problemResponses(401, 403) } },
    },
    async () => ({ items: await stats.listWorkers() }),
  );
};
