import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@inferq/core';
import { InferenceProfile } from '@inferq/inference';
import { createJobProducer, createRedisConnection, type JobProducer, type RedisClient } from '@inferq/queue';
import { createTestContext, waitFor, type TestContext } from '@inferq/test-utils';
import type { InferenceBatchRunner } from './inference-batch-runner.ts';
import { createModelConsumer } from './model-consumer.ts';
import type { PendingJob } from './pending-job.ts';

// How many batches of one model a worker keeps in flight (WORKER_BATCHES_IN_FLIGHT),
// on real Redis with a runner that holds each batch a while and counts.

let ctx: TestContext;
let redis: RedisClient;
let consumer: RedisClient;
let producer: JobProducer;
beforeAll(async () => {
  ctx = await createTestContext();
  redis = createRedisConnection(ctx.env.REDIS_URL!, 'producer');
  consumer = createRedisConnection(ctx.env.REDIS_URL!, 'consumer');
  producer = createJobProducer({ connection: redis, prefix: ctx.prefix });
  await new Promise((resolve) => redis.once('ready', resolve));
});
afterAll(async () => {
  await producer?.close();
  await redis?.quit();
  consumer?.disconnect();
  await ctx?.close();
});

/** A model consumer of `model` on the test's Redis: batches of 4 (or 5 ms), the runner given. */
const startConsumer = (model: string, runner: InferenceBatchRunner, batchesInFlight?: number | 'auto') =>
  createModelConsumer({
    model,
    connection: consumer,
    prefix: ctx.prefix,
    maxBatchSize: 4,
    maxBatchDelayMs: 5,
    lockDurationMs: 30_000,
    stalledIntervalMs: 30_000,
    runner,
    logger: createLogger({ service: 'test', level: 'silent' }),
    profile: new InferenceProfile(),
    deadlines: false,
    ...(batchesInFlight === undefined ? {} : { batchesInFlight }),
  });

/** Runs `jobs` jobs of a fresh model through a model consumer; returns the most batches that ran at once. */
async function mostInFlight(jobs: number, batchesInFlight?: number | 'auto', deviceMs = 0): Promise<number> {
  const model = `in-flight-${randomUUID().slice(0, 8)}`;
  let running = 0;
  let most = 0;
  let done = 0;
  const runner = {
    async run(batch: PendingJob[]) {
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, 300)); // long enough for the next batches to be fetched even on a busy box
      running--;
      for (const job of batch) job.ack.ack();
      done += batch.length;
      // What `auto` learns from: the device's share of the batch's 300 ms (its session wait is its run here).
      return deviceMs > 0 ? { inferMs: deviceMs, sessionMs: deviceMs } : undefined;
    },
    failIntake: async (job: PendingJob, err: unknown) => job.ack.fail(err as Error),
  } as unknown as InferenceBatchRunner;
  await producer.enqueueJobs(
    Array.from({ length: jobs }, () => ({ jobId: randomUUID(), model, priority: 'normal' as const, payload: { modelVersion: 1, batchKey: 'x' } })),
  );
  const worker = startConsumer(model, runner, batchesInFlight);
  try {
    await waitFor(async () => done === jobs, { timeoutMs: 20_000, intervalMs: 20, what: `${jobs} jobs run` });
  } finally {
    await worker.close();
  }
  return most;
}

describe('batches in flight per model', () => {
  it('runs two at once by default, and as many as WORKER_BATCHES_IN_FLIGHT says', async () => {
    expect(await mostInFlight(40)).toBe(2);
    expect(await mostInFlight(40, 5)).toBe(5);
    expect(await mostInFlight(12, 1)).toBe(1);
  });

  it("auto: as many as cover a batch's way with batches on the device, from the batches measured", async () => {
    // 50 ms of device in a way of 300 ms and a little (timers fire late): 6 or 7 in flight keep it busy.
    const fast = await mostInFlight(80, 'auto', 50);
    expect(fast).toBeGreaterThanOrEqual(6);
    expect(fast).toBeLessThanOrEqual(8);
    // A device that is the whole way: the default's 2.
    expect(await mostInFlight(40, 'auto', 300)).toBe(2);
  });
});

describe('a more urgent job beside batch-class batches', () => {
  it('starts its batch at once, beyond the batches in flight, while they still run', async () => {
    const model = `overtake-${randomUUID().slice(0, 8)}`;
    const urgentId = randomUUID();
    let running = 0;
    let most = 0;
    let done = 0;
    /** For each batch as it starts: whether it holds the urgent job, and how many ran beside it then. */
    const starts: Array<{ urgent: boolean; beside: number; priorities: string[] }> = [];
    const runner = {
      async run(batch: PendingJob[]) {
        starts.push({ urgent: batch.some((j) => j.jobId === urgentId), beside: running, priorities: batch.map((j) => j.priority) });
        most = Math.max(most, ++running);
        await new Promise((resolve) => setTimeout(resolve, 300));
        running--;
        for (const job of batch) job.ack.ack();
        done += batch.length;
        return undefined;
      },
      failIntake: async (job: PendingJob, err: unknown) => job.ack.fail(err as Error),
    } as unknown as InferenceBatchRunner;
    const job = (priority: 'batch' | 'normal', jobId = randomUUID()) => ({ jobId, model, priority, payload: { modelVersion: 1, batchKey: 'x' } });
    // Two batches' worth in entries of four (a batch's submits share entries): the consumer holds room for two entries
    // more, so the urgent job is taken while both run, as a worker with a deeper backlog takes it between two acks.
    const grouped = createJobProducer({ connection: redis, prefix: ctx.prefix, groupMax: 4 });
    await grouped.enqueueJobs(Array.from({ length: 8 }, () => job('batch')));
    await grouped.close();
    const worker = startConsumer(model, runner);
    try {
      await waitFor(() => running === 2, { timeoutMs: 20_000, intervalMs: 5, what: 'two batch-class batches running' });
      await producer.enqueueJobs([job('normal', urgentId)]);
      await waitFor(() => done === 9, { timeoutMs: 20_000, intervalMs: 20, what: '9 jobs run' });
    } finally {
      await worker.close();
    }
    const urgent = starts.find((s) => s.urgent)!;
    // Led by the urgent job, started beside the two batch-class batches in flight: one batch more than in flight, no more.
    expect(urgent.priorities[0]).toBe('normal');
    expect(urgent.beside).toBe(2);
    expect(most).toBe(3);
    expect(starts.filter((s) => s.beside === 2)).toEqual([urgent]);
  });
});
