import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import { listLatestModels, type Pool } from '@inferq/db';
import { checkEvictionPolicy, listServedModels, type JobProducer, type RedisClient } from '@inferq/queue';
import { checkReachable } from '../services/readiness.ts';

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

type Check = Static<ReturnType<typeof checkSchema>>;

export const healthRoutes: FastifyPluginAsyncTypebox<{
  pool: Pool;
  redis: RedisClient;
  producer: JobProducer;
  storageSetup?: { check(): Check };
}> = async (app, { pool, redis, producer, storageSetup }) => {
  // Read once it succeeds: the policy rarely changes, and managed Redis may refuse CONFIG.
  let evictionPolicy: Check | undefined;
  async function readEvictionPolicy(): Promise<Check | undefined> {
    if (evictionPolicy) return evictionPolicy;
    const policy = await checkEvictionPolicy(redis);
    if (policy === undefined) return undefined;
    evictionPolicy = policy.ok ? { ok: true } : { ok: false, detail: policy.detail };
    return evictionPolicy;
  }

  async function modelsWithoutWorker(): Promise<string[] | undefined> {
    try {
      const [models, served] = await Promise.all([listLatestModels(pool), listServedModels(redis, producer.prefix)]);
      // A model whose versions are all retired takes no job: it needs no worker.
      return models.filter((m) => !m.retiredAt && !served.has(m.name)).map((m) => m.name);
    } catch {
      return undefined; // Postgres or Redis down: their own checks say so.
    }
  }

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
      const [reachable, policy, idle] = await Promise.all([checkReachable({ pool, redis }), readEvictionPolicy(), modelsWithoutWorker()]);
      const workers = idle === undefined ? undefined : idle.length === 0 ? { ok: true } : { ok: false, detail: `no live worker serves ${idle.join(', ')}` };
      const storage = storageSetup?.check();
      const checks = {
        postgres: reachable.postgres,
        redis: reachable.redis,
        ...(policy && { redisEvictionPolicy: policy }),
        ...(workers && { workers }),
        ...(storage && { storage }),
      };
      const ok = Object.values(checks).every((c) => c.ok);
      return reply.status(reachable.ok ? 200 : 503).send({ status: ok ? 'ok' : 'degraded', checks, modelsWithoutWorker: idle ?? [] });
    },
  );
};
