import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requiredTestVar, waitFor } from '@inferq/test-utils';
import {
  BULL_PRIORITY,
  createCarriedInputs,
  createJobEvents,
  createJobProducer,
  createQueueConsumer,
  createRedisConnection,
  deleteKeysWithPrefix,
  formEntries,
  NonRetryableError,
  packCarried,
  queueKey,
  queueKeyStem,
  unpackCarried,
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
    expect(await redis.zcard(queueKey(prefix, model, 'prioritized'))).toBe(4); // a: 4 + 2, b: 1, low: 1
    expect(await producer.backlog(model)).toBe(8);
    const depth = await producer.readDepth(model);
    expect({ normal: depth.normal, low: depth.low }).toEqual({ normal: 7, low: 1 });
    const ids = rs.map((r) => r.jobId);
    expect(await producer.findQueuedIds(model, [...ids, 'not-queued'])).toEqual(new Set(ids));
    // Aging moves a member's entry, and its other members' count with it.
    expect(await producer.promoteJobs(model, [{ id: rs[2]!.jobId, tenant: 'a', target: 'high' }])).toBe(1);
    const aged = await producer.readDepth(model);
    expect({ high: aged.high, normal: aged.normal }).toEqual({ high: 4, normal: 3 });
    await deleteKeysWithPrefix(redis, queueKeyStem(prefix, model));
    // A count left behind (an add that failed after its bookkeeping) shows nowhere once nothing waits.
    await redis.hincrby(queueKey(prefix, model, 'group-extras'), '1', 5);
    expect(await producer.backlog(model)).toBe(0);
    expect((await producer.readDepth(model)).normal).toBe(0);
    await redis.del(queueKey(prefix, model, 'group-extras'));
  });

  it("are split by the consumer: each member's handle its own, failures and give-backs queued again alone", async () => {
    const model = `g-${randomUUID().slice(0, 8)}`;
    const names = ['done', 'bad', 'back', 'final'];
    const rs = names.map((name) => ({ ...request(model, 'a'), jobId: `${name}-${randomUUID()}` }));
    const taken: Array<{ id: string; attemptsMade: number; maxAttempts: number; entrySize: number }> = [];
    const plan: Record<string, (ack: JobAck, job: QueueJob) => void> = {
      done: (ack) => ack.ack(),
      bad: (ack) => ack.fail(new Error('bad job')),
      final: (ack) => ack.fail(new NonRetryableError('never again')),
      back: (ack, job) => (taken.filter((t) => t.id === job.id).length === 1 ? ack.release('not here') : ack.ack()),
    };
    const events = createJobEvents({ connection: redis, prefix });
    await events.listen(model);
    const watch = events.watch(rs[0]!.jobId);
    const completed: Array<{ id: string; value: unknown }> = [];
    const failed: string[] = [];
    let heldWhileRunning: number | undefined;
    const consumer = createQueueConsumer(
      {
        url: requiredTestVar('REDIS_URL'),
        prefix,
        model,
        concurrency: 4,
        onEntryCompleted: (id, value) => completed.push({ id, value }),
        onAttemptFailed: (entry) => failed.push(entry.id),
      },
      async (job, ack) => {
        taken.push({ id: job.id, attemptsMade: job.attemptsMade, maxAttempts: job.maxAttempts, entrySize: job.entrySize });
        // While the entry is held, its members count as held jobs, not waiting ones.
        if (job.id.startsWith('done')) heldWhileRunning = (await producer.readDepth(model)).active;
        plan[job.id.split('-')[0]!]!(ack, job);
      },
    );
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
      expect(await redis.hlen(queueKey(prefix, model, 'group-members'))).toBe(0);
      expect(await redis.hlen(queueKey(prefix, model, 'group-held'))).toBe(0);
    } finally {
      watch.stop();
      await consumer.close();
      await events.close();
      await deleteKeysWithPrefix(redis, queueKeyStem(prefix, model));
    }
  });

  it('queue a member again at the fair position its entry holds, with its carried inputs', async () => {
    const model = `g-${randomUUID().slice(0, 8)}`;
    const input = { name: 'x', datatype: 'FP32' as const, shape: [1, 2], bytes: 8, data: new Uint8Array(8).fill(7) };
    const carrying = (name: string): EnqueueRequest => {
      const { headers, bytes } = packCarried([input]);
      const r = request(model, 'a');
      return { ...r, jobId: `${name}-${randomUUID()}`, payload: { ...r.payload, inputs: headers }, carriedBytes: bytes };
    };
    const carried = createCarriedInputs(redis, prefix);
    const taken: Array<{ id: string; priority: number; inputs: unknown; bytes?: Uint8Array; entrySize: number }> = [];
    const completed: string[] = [];
    // Both entries wait before a consumer starts: key a's first takes the class's first number, its second starts
    // where the first ends, behind it.
    await producer.enqueueJobs([carrying('first'), carrying('first')]);
    const second = [carrying('back'), carrying('bad')];
    await producer.enqueueJobs(second);
    const [back, bad] = second.map((r) => r.jobId) as [string, string];
    const consumer = createQueueConsumer(
      { url: requiredTestVar('REDIS_URL'), prefix, model, concurrency: 2, onEntryCompleted: (id) => completed.push(id) },
      async (job, ack) => {
        const again = taken.some((t) => t.id === job.id);
        // A batch takes its jobs' carried bytes before it runs: `back` is given back before its batch ran.
        const [bytes] = job.id === back && !again ? [] : await carried.take(model, [job.id]);
        const inputs = bytes ? unpackCarried(job.data.inputs!, bytes) : undefined;
        taken.push({ id: job.id, priority: job.priority, inputs: job.data.inputs, bytes: inputs?.[0]?.data, entrySize: job.entrySize });
        if (again || job.id.startsWith('first')) ack.ack();
        else if (job.id === back) ack.release('not here');
        else ack.fail(new Error('bad once'));
      },
    );
    try {
      await waitFor(async () => completed.length === 4, { timeoutMs: 10_000, what: 'both entries, and both members queued again' });
      const entryPriority = taken.find((t) => t.id === back)!.priority;
      expect(entryPriority).toBeGreaterThan(BULL_PRIORITY.normal);
      const headers = second[0]!.payload.inputs;
      // Given back before its batch read its bytes: queued again at its entry's number, where its bytes are found again.
      expect(taken.filter((t) => t.id === back)).toEqual([
        { id: back, priority: entryPriority, inputs: headers, bytes: undefined, entrySize: 2 },
        { id: back, priority: entryPriority, inputs: headers, bytes: input.data, entrySize: 1 },
      ]);
      // Failed after its batch took them: the same number and headers, and no bytes left (its claim reads its row's).
      expect(taken.filter((t) => t.id === bad)).toEqual([
        { id: bad, priority: entryPriority, inputs: headers, bytes: input.data, entrySize: 2 },
        { id: bad, priority: entryPriority, inputs: headers, bytes: undefined, entrySize: 1 },
      ]);
    } finally {
      await consumer.close();
      await deleteKeysWithPrefix(redis, queueKeyStem(prefix, model));
    }
  });
});
