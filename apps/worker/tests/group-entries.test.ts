import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisConnection, queueNameFor, type RedisClient } from '@inferq/queue';
import { mlpJob, startStack, waitFor, type Stack } from '@inferq/test-utils';

// Several jobs as one queue entry (QUEUE_GROUP_MAX): submits that commit together share an entry, which the worker
// splits. Promises: every job runs once to its own result; the queue's depth counts jobs; `Prefer: wait` answers a
// member when its entry ends; a canceled member is skipped and the rest run; a member whose entry is lost is queued
// again alone by the reconciler (Postgres is the record).

const GROUP_MAX = 8;
let stack: Stack;
let redis: RedisClient;
beforeAll(async () => {
  stack = await startStack({ apiEnv: { QUEUE_GROUP_MAX: String(GROUP_MAX) } });
  await stack.registerModel('mlp');
  redis = createRedisConnection(stack.ctx.env.REDIS_URL!, 'producer');
});
afterAll(async () => {
  redis?.disconnect();
  await stack?.close();
});

const key = (name: string) => `${stack.ctx.prefix}:${queueNameFor('mlp')}:${name}`;
const statuses = async (ids: string[]) =>
  (await stack.ctx.pool.query<{ id: string; status: string }>('SELECT id::text, status FROM jobs WHERE id = ANY($1)', [ids])).rows;
/** Submits `n` jobs at once, so they commit as one group. */
const submitTogether = async (n: number, first: number): Promise<string[]> =>
  Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const res = await stack.request('POST', '/v1/jobs', mlpJob(first + i));
      expect(res.status).toBe(202);
      return res.json.id as string;
    }),
  );

describe('group entries end to end', () => {
  it('runs each member once to its own result, counting the queue in jobs, skipping a canceled one', async () => {
    expect((await stack.request('POST', '/v1/models/mlp/pause')).status).toBe(200);
    const ids = await submitTogether(24, 0);
    const entries = await redis.zcard(key('prioritized'));
    expect(entries).toBeLessThan(ids.length);
    expect(entries).toBeGreaterThanOrEqual(Math.ceil(ids.length / GROUP_MAX));
    const depth = await stack.request('POST', '/v1/models/mlp/pause');
    expect(depth.json.normal).toBe(ids.length);
    const canceled = ids[5]!;
    expect((await stack.request('POST', `/v1/jobs/${canceled}/cancel`)).status).toBe(200);
    await stack.startWorker();
    expect((await stack.request('POST', '/v1/models/mlp/resume')).status).toBe(200);
    await waitFor(async () => (await statuses(ids)).every((r) => r.status !== 'queued' && r.status !== 'running'), {
      timeoutMs: 30_000,
      what: 'every member to end',
    });
    for (const r of await statuses(ids)) expect(r.status, r.id).toBe(r.id === canceled ? 'canceled' : 'succeeded');
    // Each result is its own input's: the same input alone gives the same outputs.
    const alone = await stack.request('POST', '/v1/jobs', mlpJob(7), { prefer: 'wait=30' });
    const member = await stack.request('GET', `/v1/jobs/${ids[7]}`);
    expect(member.json.outputs).toEqual(alone.json.outputs);
    expect(await redis.hlen(key('group-members'))).toBe(0);
    expect((await stack.request('POST', '/v1/models/mlp/pause')).json.normal).toBe(0);
    expect((await stack.request('POST', '/v1/models/mlp/resume')).status).toBe(200);
  });

  it('answers Prefer: wait for members when their entry ends', async () => {
    await stack.waitUntilServed('mlp');
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => stack.request('POST', '/v1/jobs', mlpJob(100 + i), { prefer: 'wait=30' })));
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(a.json.status).toBe('succeeded');
    }
  });

  it('queues a member again alone when its entry is lost', async () => {
    expect((await stack.request('POST', '/v1/models/mlp/pause')).status).toBe(200);
    const ids = await submitTogether(6, 200);
    const groups = [...new Set(Object.values(await redis.hgetall(key('group-members'))))];
    expect(groups.length).toBeGreaterThan(0);
    // The entries go (a failover that missed their writes); the members' rows still say queued.
    for (const g of groups) {
      await redis.del(key(g));
      await redis.zrem(key('prioritized'), g);
    }
    expect((await stack.request('POST', '/v1/models/mlp/resume')).status).toBe(200);
    await waitFor(async () => (await statuses(ids)).every((r) => r.status === 'succeeded'), { timeoutMs: 30_000, what: 'the lost entries’ members to run' });
  });
});
