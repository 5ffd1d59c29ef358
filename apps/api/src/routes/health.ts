import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Readiness } from '../services/system/readiness.ts';

const checkSchema = (description?: string) => Type.Object({ ok: Type.Boolean(), detail: Type.Optional(Type.String()) }, { description });
const ReadySchema = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')], { description: '`degraded` when any check fails' }),
    checks: Type.Object({
      postgres: checkSchema(),
      redis: checkSchema(),
      redisEvictionPolicy: Type.Optional(checkSchema('BullMQ needs maxmemory-policy noeviction')),
      workers: Type.Optional(checkSchema('Every registered model has a live worker')),
      storage: Type.Optional(
        checkSchema('The object storage bucket is ready; until it is, model uploads, large inputs and outputs fail, and the API keeps trying'),
      ),
    }),
    modelsWithoutWorker: Type.Array(Type.String(), { description: 'Models whose jobs wait because no live worker serves them' }),
  },
  {
    examples: [
      {
        status: 'degraded',
        checks: {
          postgres: { ok: true },
          redis: { ok: true },
          redisEvictionPolicy: { ok: true },
          workers: { ok: false, detail: 'no live worker serves transformer' },
        },
        modelsWithoutWorker: ['transformer'],
      },
    ],
  },
);

/** Liveness and readiness; the checks themselves are the readiness service's (services/system/readiness.ts). */
export const healthRoutes: FastifyPluginAsyncTypebox<{ readiness: Readiness }> = async (app, { readiness }) => {
  app.get(
    '/healthz',
    { schema: { tags: ['health'], summary: 'Liveness', response: { 200: Type.Object({ status: Type.Literal('ok') }, { examples: [{ status: 'ok' }] }) } } },
    async () => ({ status: 'ok' as const }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        tags: ['health'],
        summary: 'Readiness: Postgres and Redis reachable',
        description:
          'Answers 503 when Postgres or Redis cannot be reached. A wrong Redis eviction policy, models without a live worker ' +
          'or an object storage bucket not ready yet make the status `degraded` but keep 200: the API still accepts jobs ' +
          '(those whose tensors need object storage fail until it answers).',
        response: { 200: ReadySchema, 503: ReadySchema },
      },
    },
    async (_request, reply) => {
      const { reachable, report } = await readiness.readReadiness();
      return reply.status(reachable ? 200 : 503).send(report);
    },
  );
};
