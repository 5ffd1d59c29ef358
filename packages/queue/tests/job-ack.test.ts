import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requiredTestVar, waitFor } from '@inferq/test-utils';
import {
  createJobAck,
  createJobProducer,
  createQueueConsumer,
  createRedisConnection,
  NonRetryableError,
  type JobAck,
  type JobProducer,
  type QueueJob,
  type RedisClient,
} from '../src/index.ts';

// The handle a consumer hands out with each held job: used once, it completes,
// fails or gives back the queue job; a second use is reported and ignored.

describe('createJobAck', () => {
  it('keeps the first outcome and reports a second use without applying it', async () => {
    const repeats: unknown[] = [];
    const ack = createJobAck('j1', (...args) => repeats.push(args));
    expect(ack.isAcknowledged).toBe(false);
    ack.release('worker fault');
    ack.ack();
    ack.fail(new Error('late'));
    expect(ack.isAcknowledged).toBe(true);
    expect(await ack.outcome).toEqual({ kind: 'release', reason: 'worker fault' });
    expect(repeats).toEqual([
      ['j1', 'ack', 'release'],
      ['j1', 'fail', 'release'],
    ]);
  });
});

describe('createQueueConsumer with its handles, on real Redis', () => {
  const prefix = `test-ack-${randomUUID()}`;
  let redis: RedisClient;
  let producer: JobProducer;
  beforeAll(async () => {
    redis = createRedisConnection(requiredTestVar('REDIS_URL'), 'producer');
    await new Promise((resolve) => redis.once('ready', resolve));
    producer = createJobProducer({ connection: redis, prefix, retry: { attempts: 2, backoffMs: 10 } });
  });
  afterAll(async () => {
    await producer?.close();
    await redis?.quit();
  });

  it('completes on ack, spends an attempt on fail (all on a NonRetryableError), gives back unspent on release, ignores a second use', async () => {
    const model = `ack-${randomUUID().slice(0, 8)}`;
    const taken: Array<{ id: string; attemptsMade: number }> = [];
    const repeats: unknown[] = [];
    const plan: Record<string, (ack: JobAck, job: QueueJob) => void> = {
      done: (ack) => ack.ack(),
      twice: (ack) => {
        ack.ack();
        ack.fail(new Error('second use'));
      },
      bad: (ack) => ack.fail(new Error('bad job')),
      final: (ack) => ack.fail(new NonRetryableError('never again')),
      // Given back the first time; acknowledged when taken again.
      back: (ack, job) => (taken.filter((t) => t.id === job.id).length === 1 ? ack.release('not here') : ack.ack()),
    };
    const completed: string[] = [];
    const failed: Array<{ id: string; attemptsMade: number; error: Error }> = [];
    const consumer = createQueueConsumer(
      {
        url: requiredTestVar('REDIS_URL'),
        prefix,
        model,
        concurrency: 4,
        onRepeatedAck: (...args) => repeats.push(args),
        onEntryCompleted: (id) => completed.push(id),
        onAttemptFailed: (entry, error) => failed.push({ ...entry, error }),
      },
      (job, ack) => {
        taken.push({ id: job.id, attemptsMade: job.attemptsMade });
        plan[job.id.split('-')[0]!]!(ack, job);
      },
    );
    try {
      const ids = Object.keys(plan).map((name) => `${name}-${randomUUID()}`);
      await producer.enqueueJobs(ids.map((jobId) => ({ jobId, model, priority: 'normal' as const, payload: { modelVersion: 1, batchKey: 'x' } })));
      const [done, twice, bad, final, back] = ids as [string, string, string, string, string];
      await waitFor(async () => completed.length === 3 && failed.length === 3, { timeoutMs: 10_000, what: 'every job ended' });
      expect(completed.sort()).toEqual([done, twice, back].sort());
      expect(repeats).toEqual([[twice, 'fail', 'ack']]);
      // A failure spends an attempt each time: the second is the last (attempts: 2).
      expect(failed.filter((f) => f.id === bad).map(({ id, attemptsMade }) => ({ id, attemptsMade }))).toEqual([
        { id: bad, attemptsMade: 1 },
        { id: bad, attemptsMade: 2 },
      ]);
      // A NonRetryableError ends the job at its first attempt (a retried one would wait in the queue), told as the holder gave it.
      expect(failed.filter((f) => f.id === final)).toEqual([{ id: final, attemptsMade: 1, error: expect.any(NonRetryableError) }]);
      expect(await producer.findQueuedIds(model, [final])).toEqual(new Set());
      expect(taken.filter((t) => t.id === final)).toHaveLength(1);
      expect(taken.filter((t) => t.id === back)).toEqual([
        { id: back, attemptsMade: 0 },
        { id: back, attemptsMade: 0 },
      ]);
    } finally {
      await consumer.close();
    }
  });
});
