import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_KEY,
  installCompletionLog,
  mlpJob,
  pauseWorkerForBacklog,
  resumeWorker,
  settleLoad,
  startPrivateRedis,
  startStack,
  startSteadyLoad,
  waitFor,
  type PrivateRedis,
  type Stack,
  type SteadyLoad,
  type TestProcess,
} from '@inferq/test-utils';
import { createJobProducer, createRedisConnection, type JobProducer, type RedisClient } from '@inferq/queue';

// Redis of this file's own, restarted (no persistence: every key gone) and
// flushed while a steady load submits. The worker is paused (SIGSTOP) for the
// fault, so a backlog sits in the queue when Redis loses it. Promise: 503 with
// Retry-After while Redis is down, and every job accepted before or after
// completes exactly once (the reconciler re-enqueues what the queue lost:
// DESIGN invariant 1).

let redis: PrivateRedis;
let stack: Stack;
let worker: TestProcess;
let connection: RedisClient;
let producer: JobProducer;
beforeAll(async () => {
  redis = await startPrivateRedis();
  stack = await startStack({ services: redis.env });
  connection = createRedisConnection(stack.ctx.env.REDIS_URL!, 'producer');
  connection.on('error', () => {}); // Redis goes away on purpose
  producer = createJobProducer({ connection, prefix: stack.ctx.prefix });
  await installCompletionLog(stack.ctx.pool);
  await stack.registerModel('mlp');
  worker = await stack.startWorker();
});
afterAll(async () => {
  if (worker) resumeWorker(worker);
  await producer?.close();
  connection?.disconnect();
  await stack?.close();
  await redis?.close();
});

/** Jobs waiting in Redis itself: the worker's prefetched ones would survive the fault in its memory and prove nothing. */
const inRedis = async (): Promise<number> => producer.backlog('mlp');
const startLoad = () => startSteadyLoad(stack, { ratePerS: 25, body: mlpJob, authorization: `Bearer ${ADMIN_KEY}` });
async function moreAccepted(load: SteadyLoad, n: number, what: string): Promise<void> {
  const target = load.accepted.length + n;
  await waitFor(() => load.accepted.length >= target, { timeoutMs: 20_000, what });
}

describe('Redis restarted under load', () => {
  it('refuses with 503 + Retry-After while down; every accepted job completes exactly once', async () => {
    const load = startLoad();
    const logFrom = worker.output().length;
    await moreAccepted(load, 25, 'jobs accepted before the restart');
    const backlog = await pauseWorkerForBacklog(worker, inRedis, 20);
    await redis.stop();
    await waitFor(() => load.refused >= 10, { timeoutMs: 10_000, what: 'submissions refused while Redis is down' });
    await redis.start();
    resumeWorker(worker);
    await moreAccepted(load, 25, 'jobs accepted after the restart');
    const { result, report } = await settleLoad(stack.ctx.pool, load, `Redis restarted (${backlog} jobs queued when it stopped)`);
    expect(result.violations).toEqual([]);
    expect(report).toMatchObject({ lost: 0, duplicated: 0, failed: 0 });
    expect(report.completed).toBe(report.accepted);
    expect(Object.keys(result.refusedCodes)).toEqual(['QUEUE_UNAVAILABLE']);
    // Put back by the pass the worker runs as soon as Redis takes writes again, or else by a periodic one.
    expect(worker.output().slice(logFrom)).toMatch(
      /reconciler re-enqueued jobs missing from the queue|"requeued":[1-9]\d*,[^}]*"msg":"reconciler checked the jobs a failover may have lost"/,
    );
  });
});

describe('Redis flushed under load', () => {
  it('loses no accepted job: the reconciler re-enqueues what the flush took, each completes exactly once', async () => {
    const load = startLoad();
    const logFrom = worker.output().length;
    await moreAccepted(load, 25, 'jobs accepted before the flush');
    const backlog = await pauseWorkerForBacklog(worker, inRedis, 20);
    await redis.flush();
    resumeWorker(worker);
    await moreAccepted(load, 25, 'jobs accepted after the flush');
    const { result, report } = await settleLoad(stack.ctx.pool, load, `Redis flushed (${backlog} jobs queued at the flush)`);
    expect(result.violations).toEqual([]);
    expect(report).toMatchObject({ lost: 0, duplicated: 0, failed: 0 });
    expect(report.completed).toBe(report.accepted);
    // Put back by the pass the worker runs as soon as Redis takes writes again, or else by a periodic one.
    expect(worker.output().slice(logFrom)).toMatch(
      /reconciler re-enqueued jobs missing from the queue|"requeued":[1-9]\d*,[^}]*"msg":"reconciler checked the jobs a failover may have lost"/,
    );
  });
});
