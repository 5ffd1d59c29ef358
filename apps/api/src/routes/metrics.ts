import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { ApiMetrics } from '../metrics/api-metrics.ts';

/**
 * Prometheus scrape endpoint; public like the health checks (keep it inside the cluster). It answers through any
 * dependency's outage: what its gauges read at scrape time is held to one limit a scrape (createScrapeReads).
 */
export const metricsRoutes: FastifyPluginAsyncTypebox<{ metrics: ApiMetrics }> = async (app, { metrics }) => {
  app.get(
    '/metrics',
    {
      schema: {
        tags: ['health'],
        summary: 'Prometheus metrics',
        produces: ['text/plain'],
        response: {
          200: Type.String({
            description: 'Prometheus text exposition format',
            examples: [
              '# HELP inferq_jobs_submitted_total Jobs accepted (202) by model and priority\n' +
                '# TYPE inferq_jobs_submitted_total counter\n' +
                'inferq_jobs_submitted_total{model="mlp",priority="normal"} 1042\n',
            ],
          }),
        },
      },
    },
    async (_request, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
};
