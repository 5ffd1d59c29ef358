import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requiredTestVar, waitFor } from '@inferq/test-utils';
import {
  createJobEvents,
  createJobProducer,
  createQueueConsumer,
  createRedisConnection,
  formEntries,
  promoteJobs,
  readQueueDepth,
  UnrecoverableError,
  type EnqueueRequest,
  type JobAck,
  type JobProducer,
  type QueueJob,
  type RedisClient,
} from '../src/index.ts';

// Several jobs as one queue entry (QUEUE_GROUP_MAX): formed per enqueue call, counted as jobs, found by the reconciler's
// check, moved by aging, split by the consumer with a handle a member, and ended waking each member's watch.

const request = (model: string, tenant: string, priority: EnqueueRequest['priority'] = 'normal'): EnqueueRequest => ({
  jobId: `${tenant}-${randomUUID()}`,
  model,
  priority,
  tenant,
  payload: { modelVersion: 1, batchKey: 'x', priority },
});

let redis: RedisClient;
let producer: JobProducer;
const prefix = `test-groups-${randomUUID()}`;
beforeAll(async () => {
  redis = createRedisConnection(requiredTestVar('REDIS_URL'), 'producer');
  await new Promise((resolve) => redis.once('ready', resolve));
  producer = createJobProducer({ connection: redis, prefix, retry: { attempts: 2, backoffMs: 10 }, groupMax: 4 });
});
afterAll(async () => {
  await producer?.close();
  await redis?.quit();
});

describe('formEntries', () => {
  it('puts jobs of one class, key and weight together, in order, a new entry when one is full', () => {
    const rs = [request('m', 'a'), request('m', 'b'), request('m', 'a'), request('m', 'a', 'high'), request('m', 'a'), request('m', 'a'), request('m', 'a')];
    const entries = formEntries(rs, 4);
    expect(entries.map((e) => e.map((r) => rs.indexOf(r)))).toEqual([[0, 2, 4, 5], [1], [3], [6]]);
    expect(formEntries(rs, 1)).toHaveLength(rs.length);
  });
});

describe('group entries on real Redis', () => {
  it('count as their jobs, and every member is found queued', async () => {
    const model = `g-${randomUUID().slice(0, 8)}`;
    const rs = [...Array.from({ length: 6 }, () => request(model, 'a')), request(model, 'b'), request(model, 'a', 'low')];
    await producer.enqueueJobs(rs);
    expect(await producer.queueFor(model).count()).toBe(4); // a: 4 + 2, b: 1, low: 1
    expect(await producer.backlog(model)).toBe(8);
    const depth = await readQueueDepth(redis, producer.queueFor(model), model);
    expect({ normal: depth.normal, low: depth.low }).toEqual({ normal: 7, low: 1 });
    const ids = rs.map((r) => r.jobId);
    expect(await producer.findQueuedIds(model, [...ids, 'not-queued'])).toEqual(new Set(ids));
    // Aging moves a member's entry, and its other members' count with it.
    expect(await promoteJobs(redis, producer.queueFor(model), [{ id: rs[2]!.jobId, tenant: 'a', target: 'high' }])).toBe(1);
    const aged = await readQueueDepth(redis, producer.queueFor(model), model);
    expect({ high: aged.high, normal: aged.normal }).toEqual({ high: 4, normal: 3 });
    await producer.queueFor(model).obliterate({ force: true });
    // A count left behind (an add that failed after its bookkeeping) shows nowhere once nothing waits.
    await redis.hincrby(producer.queueFor(model).toKey('group-extras'), '1', 5);
    expect(await producer.backlog(model)).toBe(0);
    expect((await readQueueDepth(redis, producer.queueFor(model), model)).normal).toBe(0);
    await redis.del(producer.queueFor(model).toKey('group-extras'));
  });

  it("are split by the consumer: each member's handle its own, failures and give-backs queued again alone", async () => {
    const model = `g-${randomUUID().slice(0, 8)}`;
    const names = ['done', 'bad', 'back', 'final'];
    const rs = names.map((name) => ({ ...request(model, 'a'), jobId: `${name}-${randomUUID()}` }));
    const taken: Array<{ id: string; attemptsMade: number; maxAttempts: number; entrySize: number }> = [];
    const plan: Record<string, (ack: JobAck, job: QueueJob) => void> = {
      done: (ack) => ack.ack(),
      bad: (ack) => ack.fail(new Error('bad job')),
      final: (ack) => ack.fail(new UnrecoverableError('never again')),
      back: (ack, job) => (taken.filter((t) => t.id === job.id).length === 1 ? ack.release('not here') : ack.ack()),
    };
    const events = createJobEvents({ connection: redis, prefix });
    await events.listen(model);
    const watch = events.watch(rs[0]!.jobId);
    const completed: Array<{ id: string; value: unknown }> = [];
    const failed: string[] = [];
    let heldWhileRunning: number | undefined;
    const consumer = createQueueConsumer({ url: requiredTestVar('REDIS_URL'), prefix, model, concurrency: 4 }, async (job, ack) => {
      taken.push({ id: job.id, attemptsMade: job.attemptsMade, maxAttempts: job.maxAttempts, entrySize: job.entrySize });
      // While the entry is held, its members count as held jobs, not waiting ones.
      if (job.id.startsWith('done')) heldWhileRunning = (await readQueueDepth(redis, producer.queueFor(model), model)).active;
      plan[job.id.split('-')[0]!]!(ack, job);
    });
    consumer.on('completed', (job, value) => completed.push({ id: job.id!, value }));
    consumer.on('failed', (job) => job && failed.push(job.id!));
    try {
      await producer.enqueueJobs(rs);
      const [done, bad, back, final] = rs.map((r) => r.jobId) as [string, string, string, string];
      // The entry; `back` queued again and acknowledged; `bad`'s last attempt, which fails.
      await waitFor(async () => completed.length === 2 && failed.length === 1, { timeoutMs: 10_000, what: 'every job ended' });
      expect(await watch.wait(1_000)).toBe('completed');
      // The entry and `back` alone, in either order (`back` is queued again before the entry completes).
      expect(completed.find((c) => c.id === `group-${done}`)?.value).toEqual([done, bad, back, final]);
      expect(completed.map((c) => c.id).sort()).toEqual([`group-${done}`, back].sort());
      expect(failed).toEqual([bad]);
      expect(taken.filter((t) => t.id === bad)).toEqual([
        { id: bad, attemptsMade: 0, maxAttempts: 2, entrySize: 4 },
        { id: bad, attemptsMade: 0, maxAttempts: 1, entrySize: 1 },
      ]);
      expect(taken.filter((t) => t.id === back)).toEqual([
        { id: back, attemptsMade: 0, maxAttempts: 2, entrySize: 4 },
        { id: back, attemptsMade: 0, maxAttempts: 2, entrySize: 1 },
      ]);
      expect(taken.filter((t) => t.id === final)).toHaveLength(1);
      // Nothing is left counted or named.
      expect(await producer.backlog(model)).toBe(0);
      expect(await producer.findQueuedIds(model, [done, bad, back, final])).toEqual(new Set());
      expect(heldWhileRunning).toBe(4);
      expect(await redis.hlen(producer.queueFor(model).toKey('group-members'))).toBe(0);
      expect(await redis.hlen(producer.queueFor(model).toKey('group-held'))).toBe(0);
    } finally {
      watch.stop();
      await consumer.close();
      await events.close();
      await producer.queueFor(model).obliterate({ force: true });
    }
  });
});
