import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisConnection, deleteKeysWithPrefix, listWorkerStatuses, type RedisClient } from '@inferq/queue';
import { mlpJob, type Stack, startStack, waitFor } from '@inferq/test-utils';

// A paused model queue with a real worker running: jobs submitted meanwhile
// are accepted and kept, none starts, and all run once it is resumed. The
// worker's other queue (an unpaused copy of the model) shows it is fetching.

let stack: Stack;
let redis: RedisClient;
beforeAll(async () => {
  stack = await startStack();
  redis = createRedisConnection(stack.ctx.env.REDIS_URL!, 'producer');
  await stack.registerModel('mlp');
  await stack.registerModel('control', {}, 'mlp');
});
afterAll(async () => {
  await redis?.quit();
  await stack?.close();
});

const statuses = async (ids: string[]) =>
  (await stack.ctx.pool.query<{ status: string }>('SELECT status FROM jobs WHERE id = ANY($1)', [ids])).rows.map((r) => r.status);

describe('a paused model queue with a live worker', () => {
  it('keeps every job submitted while paused queued, and runs them all after resume', async () => {
    const paused = await stack.request('POST', '/v1/models/mlp/pause');
    expect(paused.status).toBe(200);
    expect(paused.json.paused).toBe(true);
    await stack.startWorker({ RECONCILE_MIN_AGE_MS: '0' });
    await waitFor(async () => (await listWorkerStatuses(redis, stack.ctx.prefix)).some((w) => ['mlp', 'control'].every((m) => w.modelsServed.includes(m))), {
      timeoutMs: 30_000,
      what: 'the worker to serve both queues',
    });

    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await stack.request('POST', '/v1/jobs', mlpJob(i));
      expect(res.status).toBe(202);
      ids.push(res.json.id);
    }
    // Work submitted after the paused jobs, to the worker's other queue, runs: the worker is fetching.
    const control = await stack.request('POST', '/v1/jobs', { ...mlpJob(99), model: 'control' });
    expect(control.status).toBe(202);
    await waitFor(async () => (await statuses([control.json.id]))[0] === 'succeeded', { timeoutMs: 30_000, what: 'the control job to run' });
    // The reconciler runs meanwhile (every 500 ms, no minimum age) and finds the paused jobs in their queue: nothing else ran.
    const { rows } = await stack.ctx.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE status = 'succeeded'");
    expect(rows[0]!.n).toBe(1);
    expect(new Set(await statuses(ids))).toEqual(new Set(['queued']));
    const stats = await stack.request('GET', '/v1/stats');
    expect(stats.json.queues.find((q: { model: string }) => q.model === 'mlp')).toMatchObject({ paused: true, normal: 12, active: 0, workers: 1 });

    const resumed = await stack.request('POST', '/v1/models/mlp/resume');
    expect(resumed.status).toBe(200);
    expect(resumed.json.paused).toBe(false);
    await waitFor(async () => (await statuses(ids)).every((s) => s === 'succeeded'), { timeoutMs: 30_000, what: 'the kept jobs to run after resume' });
    // A job's outcome is stored before its queue entry is acknowledged (invariant 2): the queue's counts follow a moment later.
    const mlpQueue = async () => (await stack.request('GET', '/v1/stats')).json.queues.find((q: { model: string }) => q.model === 'mlp');
    await waitFor(async () => (await mlpQueue()).active === 0, { timeoutMs: 10_000, what: 'the acknowledged entries to leave the active count' });
    expect(await mlpQueue()).toMatchObject({ paused: false, normal: 0, active: 0 });
  });

  it('keeps a pause through a Redis that lost its data: the reconciler sets it again from Postgres before any job runs', async () => {
    expect((await stack.request('POST', '/v1/models/mlp/pause')).json.paused).toBe(true);
    expect(await deleteKeysWithPrefix(redis, stack.ctx.prefix)).toBeGreaterThan(0);
    const mlpPaused = async () => (await stack.request('GET', '/v1/stats')).json.queues.find((q: { model: string }) => q.model === 'mlp')?.paused === true;
    // The reconciler's next pass (every 500 ms here) sets the flag again; before this change it stayed unpaused.
    await waitFor(mlpPaused, { timeoutMs: 15_000, what: 'the pause to be set again from Postgres' });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await stack.request('POST', '/v1/jobs', mlpJob(100 + i))).json.id);
    const control = await stack.request('POST', '/v1/jobs', { ...mlpJob(199), model: 'control' });
    await waitFor(async () => (await statuses([control.json.id]))[0] === 'succeeded', { timeoutMs: 30_000, what: 'the control job to run' });
    expect(new Set(await statuses(ids))).toEqual(new Set(['queued']));

    expect((await stack.request('POST', '/v1/models/mlp/resume')).json.paused).toBe(false);
    await waitFor(async () => (await statuses(ids)).every((s) => s === 'succeeded'), { timeoutMs: 30_000, what: 'the kept jobs to run after resume' });
  });
});
