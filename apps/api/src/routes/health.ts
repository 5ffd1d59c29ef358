import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Pool } from '@inferq/db';
import type { Redis } from '@inferq/queue';

const ReadySchema = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  checks: Type.Record(Type.String(), Type.Object({ ok: Type.Boolean(), detail: Type.Optional(Type.String()) })),
});

async function check(fn: () => Promise<unknown>): Promise<{ ok: boolean; detail?: string }> {
  try {
    await fn();
    return { ok: true };
  } catch (err) {
    return { ok: false, detail: (err as Error).message };
  }
}

export const healthRoutes: FastifyPluginAsyncTypebox<{ pool: Pool; redis: Redis }> = async (app, { pool, redis }) => {
  app.get('/healthz', { schema: { tags: ['health'], summary: 'Liveness', response: { 200: Type.Object({ status: Type.Literal('ok') }) } } }, async () => ({ status: 'ok' as const }));
  app.get('/readyz', {
    schema: { tags: ['health'], summary: 'Readiness: Postgres and Redis reachable', response: { 200: ReadySchema, 503: ReadySchema } },
  }, async (_request, reply) => {
    const [postgres, redisCheck] = await Promise.all([check(() => pool.query('SELECT 1')), check(() => redis.ping())]);
    const ok = postgres.ok && redisCheck.ok;
    return reply.status(ok ? 200 : 503).send({ status: ok ? 'ok' : 'degraded', checks: { postgres, redis: redisCheck } });
  });
};
