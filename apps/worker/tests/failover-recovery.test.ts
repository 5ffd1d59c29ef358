import { afterAll, expect, it } from 'vitest';
import { createJobProducer, createRedisConnection, type RedisClient } from '@inferq/queue';
import { mlpJob, startPrivateRedis, type PrivateRedis, type Stack, startStack, waitFor } from '@inferq/test-utils';

// A failover to a replica that missed the last writes its primary acknowledged, on a Redis of the test's own: the
// queue entries of accepted jobs are removed (what the replica never got), then every client connection is cut (what
// clients see when the primary dies and they reconnect to the new one). The worker's reconciler would find those jobs
// only once they are RECONCILE_MIN_AGE_MS old, at its next pass (both ten minutes here); the pass the worker runs as
// soon as its connection takes writes again finds them at once.

let redis: PrivateRedis | undefined;
let stack: Stack | undefined;
let connection: RedisClient | undefined;
afterAll(async () => {
  connection?.disconnect();
  await stack?.close();
  await redis?.close();
});

it('puts back the queue entries a failover lost as soon as the new primary takes writes, not at the next pass', async () => {
  redis = await startPrivateRedis();
  stack = await startStack({ services: redis.env });
  await stack.registerModel('mlp');
  // Paused, so the jobs wait in the queue where their entries can be taken away.
  expect((await stack.request('POST', '/v1/models/mlp/pause')).status).toBe(200);
  await stack.startWorker({ RECONCILE_MIN_AGE_MS: '600000', RECONCILE_INTERVAL_MS: '600000' });

  connection = createRedisConnection(redis.env.REDIS_URL!, 'producer');
  const producer = createJobProducer({ connection, prefix: stack.ctx.prefix });
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) ids.push((await stack.request('POST', '/v1/jobs', mlpJob(i))).json.id);
  const queued = async () => (await producer.findQueuedIds('mlp', ids).catch(() => new Set<string>())).size;
  await waitFor(async () => (await queued()) === ids.length, { what: 'the jobs in the queue' });
  for (const id of ids) expect(await producer.removeJob('mlp', id)).toBe(true);
  expect(await queued()).toBe(0);

  const cutAt = Date.now();
  await redis.cutClients();
  await waitFor(async () => (await queued()) === ids.length, { timeoutMs: 30_000, what: 'the lost entries back in the queue' });
  console.log(`failover recovery: ${ids.length} lost queue entries back ${Date.now() - cutAt} ms after the connections were cut`);

  expect((await stack.request('POST', '/v1/models/mlp/resume')).status).toBe(200);
  await waitFor(
    async () =>
      (await stack!.ctx.pool.query("SELECT count(*)::int AS n FROM jobs WHERE status = 'succeeded' AND id = ANY($1)", [ids])).rows[0].n === ids.length,
    { timeoutMs: 30_000, what: 'the jobs to run once' },
  );
});
