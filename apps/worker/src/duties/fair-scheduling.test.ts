import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Priority } from '@inferq/contracts';
import { createLogger } from '@inferq/core';
import { insertJobs } from '@inferq/db';
import { CLASS_RANGE, classRange, createJobProducer, createRedisConnection, queueKey, releaseLease, type JobProducer, type RedisClient } from '@inferq/queue';
import { createTestContext, newTestJob, waitFor, type TestContext } from '@inferq/test-utils';
import { AGING_PASS, agedClass, createPriorityAger } from './priority-aging.ts';

// Fair ordering within a priority class and aging across classes, on real
// Redis (BullMQ's own ordering decides) and Postgres, with no worker: the
// order the queue would serve is read straight from the prioritized set.

let ctx: TestContext;
let redis: RedisClient;
let producer: JobProducer;
const keys = { a: randomUUID(), b: randomUUID(), c: randomUUID() };
beforeAll(async () => {
  ctx = await createTestContext();
  redis = createRedisConnection(ctx.env.REDIS_URL!, 'producer');
  producer = createJobProducer({ connection: redis, prefix: ctx.prefix });
  // The producer refuses commands until its connection is ready (a Cluster client reads the slots first).
  await waitFor(() => redis.status === 'ready', { timeoutMs: 15_000, intervalMs: 20, what: 'the Redis connection to be ready' });
  for (const [name, id] of Object.entries(keys)) {
    await ctx.pool.query("INSERT INTO api_keys (id, name, prefix, secret_hash, scopes) VALUES ($1, $2, $3, 'x', '{jobs:write}')", [id, name, id.slice(0, 8)]);
  }
});
afterAll(async () => {
  await producer?.close();
  await redis?.quit();
  await ctx?.close();
});

let model = 0;
/** Records and queues jobs of one model (a fresh one per test); returns their ids in submit order. */
async function submit(modelName: string, jobs: Array<{ tenant: string; priority?: Priority; weight?: number }>): Promise<string[]> {
  const rows = jobs.map((j) => newTestJob(j.tenant, { modelName, priority: j.priority ?? 'normal' }));
  await insertJobs(ctx.pool, rows);
  await producer.enqueueJobs(
    rows.map((r, i) => ({
      jobId: r.id,
      model: modelName,
      priority: r.priority,
      tenant: r.ownerKeyId,
      weight: jobs[i]!.weight,
      payload: { modelVersion: 1, batchKey: 'x' },
    })),
  );
  return rows.map((r) => r.id);
}
/** One of a model queue's keys in Redis. */
const keyOf = (modelName: string, suffix: string): string => queueKey(ctx.prefix, modelName, suffix);
/** Job ids in the order BullMQ would hand them to a worker. */
const serveOrder = async (modelName: string): Promise<string[]> => redis.zrange(keyOf(modelName, 'prioritized'), 0, -1);
/** The BullMQ priority a queue job's hash holds. */
const priorityOf = async (modelName: string, id: string): Promise<number> => Number(await redis.hget(keyOf(modelName, id), 'priority'));
/** Waiting jobs per priority class. */
const waitingPerClass = async (modelName: string) => {
  const { high, normal, low, batch } = await producer.readDepth(modelName);
  return { high, normal, low, batch };
};
const fresh = () => `fair-${++model}`;

describe('fair ordering within a priority', () => {
  it("puts a trickle key's job at the front, not behind another key's flood of 2,000", async () => {
    const m = fresh();
    const flood = await submit(
      m,
      Array.from({ length: 2_000 }, () => ({ tenant: keys.a })),
    );
    const [trickle] = await submit(m, [{ tenant: keys.b }]);
    const order = await serveOrder(m);
    expect(order.indexOf(trickle!)).toBeLessThanOrEqual(1);
    // The flood keeps its own order.
    expect(order.filter((id) => id !== trickle)).toEqual(flood);
  });

  it('interleaves two flooding keys by their weights (2:1)', async () => {
    const m = fresh();
    const heavy = new Set(
      await submit(
        m,
        Array.from({ length: 300 }, () => ({ tenant: keys.a, weight: 2 })),
      ),
    );
    await submit(
      m,
      Array.from({ length: 300 }, () => ({ tenant: keys.b })),
    );
    const first150 = (await serveOrder(m)).slice(0, 150);
    const share = first150.filter((id) => heavy.has(id)).length / 150;
    expect(share).toBeGreaterThan(0.6);
    expect(share).toBeLessThan(0.72);
  });

  it('serves classes in order, counts them apart, and starts a class afresh once it has drained', async () => {
    const m = fresh();
    const batch = await submit(m, [{ tenant: keys.b, priority: 'batch' }]);
    const low = await submit(m, [{ tenant: keys.a, priority: 'low' }]);
    const normal = await submit(m, [{ tenant: keys.a, priority: 'normal' }]);
    const high = await submit(m, [
      { tenant: keys.b, priority: 'high' },
      { tenant: keys.b, priority: 'high' },
    ]);
    expect(await serveOrder(m)).toEqual([...high, ...normal, ...low, ...batch]);
    expect(await waitingPerClass(m)).toEqual({ high: 2, normal: 1, low: 1, batch: 1 });
    // Every waiting job taken: the prioritized set is empty, the keys' fair finishes are still there.
    await redis.del(keyOf(m, 'prioritized'));
    const [again] = await submit(m, [{ tenant: keys.b, priority: 'high' }]);
    expect(await priorityOf(m, again!)).toBe(classRange('high').min);
  });
});

describe('a class that never drains', () => {
  it('rebases once its first waiting job is past half the range: numbers, job hashes and finishes move down, order kept', async () => {
    const m = fresh();
    const { min } = classRange('batch');
    const [first] = await submit(m, [{ tenant: keys.a, priority: 'batch' }]);
    // As if key a had had three quarters of a range of jobs served while the class never emptied.
    const far = Math.floor(CLASS_RANGE * 0.75);
    await redis.hset(keyOf(m, 'fair:3'), keys.a, String(far));
    const flood = await submit(
      m,
      Array.from({ length: 3 }, () => ({ tenant: keys.a, priority: 'batch' as const })),
    );
    expect(await priorityOf(m, flood[0]!)).toBe(min + far);
    // The first job is taken: the class's head is now three quarters up its range.
    await redis.zrem(keyOf(m, 'prioritized'), first!);
    const [trickle] = await submit(m, [{ tenant: keys.b, priority: 'batch' }]);
    const [next] = await submit(m, [{ tenant: keys.a, priority: 'batch' }]);

    // Key b's job is second (after the flood's first, its equal), key a's new one goes on after a's own.
    expect(await serveOrder(m)).toEqual([flood[0], trickle, flood[1], flood[2], next]);
    // Every number is back at the bottom of the class, and BullMQ's job hashes say the same as its zset.
    const scores = await redis.zrange(keyOf(m, 'prioritized'), 0, -1, 'WITHSCORES');
    for (let i = 0; i < scores.length; i += 2) {
      const priority = Math.floor(Number(scores[i + 1]) / 2 ** 32);
      expect(priority).toBeLessThan(min + 10);
      expect(await priorityOf(m, scores[i]!)).toBe(priority);
    }
    expect(Number(await redis.hget(keyOf(m, 'fair:3'), keys.a))).toBe(4);
  });
});

describe('priority aging', () => {
  it('moves a job up one class per aging step, never past high', () => {
    expect(agedClass('low', 9_999, 10_000)).toBe('low');
    expect(agedClass('low', 10_000, 10_000)).toBe('normal');
    expect(agedClass('low', 25_000, 10_000)).toBe('high');
    expect(agedClass('normal', 10_000, 10_000)).toBe('high');
    expect(agedClass('high', 99_000, 10_000)).toBe('high');
    // Bulk work has its completion window instead: it never moves into the interactive classes.
    expect(agedClass('batch', 99_000, 10_000)).toBe('batch');
  });

  it('puts a low job that waited two steps at the front of a flood of high jobs (a clock moved ahead by hand)', async () => {
    // The ager looks at every queued job: only this test's.
    await ctx.pool.query('DELETE FROM jobs');
    const m = fresh();
    const [lowJob] = await submit(m, [{ tenant: keys.c, priority: 'low' }]);
    // A batch job as old: it stays below everything, however long it waits.
    const [batchJob] = await submit(m, [{ tenant: keys.b, priority: 'batch' }]);
    await submit(
      m,
      Array.from({ length: 500 }, () => ({ tenant: keys.a, priority: 'high' as const })),
    );
    expect((await serveOrder(m)).indexOf(lowJob!)).toBe(500);

    const logger = createLogger({ service: 'test', level: 'silent' });
    const step = 10_000;
    const at = (ms: number) =>
      createPriorityAger({ pool: ctx.pool, producer, connection: redis, agingMs: step, logger, now: () => Date.now() + ms, passLeaseMs: 0 });
    expect(await at(0).run()).toBe(0);
    // One step: low → normal, still behind every high job.
    expect(await at(step + 1).run()).toBe(1);
    expect((await serveOrder(m)).indexOf(lowJob!)).toBe(500);
    // Two steps: → high, where its key has no other work: the front of the class.
    expect(await at(2 * step + 1).run()).toBe(1);
    expect((await serveOrder(m)).indexOf(lowJob!)).toBeLessThanOrEqual(1);
    // Already where its age puts it: nothing moves again.
    expect(await at(3 * step).run()).toBe(0);
    expect((await serveOrder(m)).at(-1)).toBe(batchJob);
  });

  it('runs one pass at a time across workers: a second pass within the lease does nothing', async () => {
    await ctx.pool.query('DELETE FROM jobs');
    const m = fresh();
    await submit(m, [
      { tenant: keys.a, priority: 'low' },
      { tenant: keys.b, priority: 'low' },
    ]);
    const logger = createLogger({ service: 'test', level: 'silent' });
    const worker = () =>
      createPriorityAger({ pool: ctx.pool, producer, connection: redis, agingMs: 10_000, logger, now: () => Date.now() + 10_001, passLeaseMs: 60_000 });
    expect(await worker().run()).toBe(2);
    await submit(m, [{ tenant: keys.c, priority: 'low' }]);
    expect(await worker().run()).toBe(0);
    await releaseLease(redis, producer.prefix, AGING_PASS);
    expect(await worker().run()).toBe(1);
  });

  it("moves one job per key a pass, so a flood's aged backlog does not jump ahead of another key's fresh work", async () => {
    await ctx.pool.query('DELETE FROM jobs');
    const m = fresh();
    const flood = await submit(
      m,
      Array.from({ length: 50 }, () => ({ tenant: keys.a })),
    );
    const [fresh1] = await submit(m, [{ tenant: keys.b }]);
    const logger = createLogger({ service: 'test', level: 'silent' });
    // Every flood job is over a step old at this clock; key b's job is too, but it is already at the front of normal.
    const ager = createPriorityAger({ pool: ctx.pool, producer, connection: redis, agingMs: 10_000, logger, now: () => Date.now() + 10_001, passLeaseMs: 0 });
    expect(await ager.run()).toBe(2);
    const order = await serveOrder(m);
    // One job of each key is now high (the flood's rows share a created_at here, so which one is up to
    // the ids); the rest of the flood stays normal, behind them.
    expect(order.slice(0, 2)).toContain(fresh1);
    const movedFlood = order.slice(0, 2).find((id) => id !== fresh1)!;
    expect(flood).toContain(movedFlood);
    expect(order.slice(2)).toEqual(flood.filter((id) => id !== movedFlood));
    expect(await ager.run()).toBe(1);
  });

  it('ages the jobs of a paused queue inside it: they move up a class, stay queued, and wake no worker until resumed', async () => {
    await ctx.pool.query('DELETE FROM jobs');
    const m = fresh();
    const [lowJob] = await submit(m, [{ tenant: keys.c, priority: 'low' }]);
    await producer.pause(m);
    await redis.del(keyOf(m, 'marker'));
    const logger = createLogger({ service: 'test', level: 'silent' });
    const ager = createPriorityAger({ pool: ctx.pool, producer, connection: redis, agingMs: 10_000, logger, now: () => Date.now() + 10_001, passLeaseMs: 0 });
    expect(await ager.run()).toBe(1);
    expect(await serveOrder(m)).toEqual([lowJob]);
    expect(await waitingPerClass(m)).toEqual({ high: 0, normal: 1, low: 0, batch: 0 });
    expect(await redis.exists(keyOf(m, 'marker'))).toBe(0);
    expect(await producer.isPaused(m)).toBe(true);
    await producer.resume(m);
    expect(await redis.exists(keyOf(m, 'marker'))).toBe(1);
  });
});
