import { randomBytes, randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { BULL_PRIORITY, createRedisConnection, JOB_NAME, jobOptions } from '@inferq/queue';
import { meterTiers, type TierCosts } from '../costs/tier-costs.ts';

export interface BareBullmqOptions {
  redisUrl: string;
  jobs: number;
  /** Worker concurrency. */
  concurrency: number;
  /** Each job's data, e.g. a payload the size of inferq's. */
  data: object;
  /**
   * Every job added before the Worker starts, and only its drain timed and metered: BullMQ's own part of a job's
   * worker-side bookkeeping (the fetch, lock and acknowledgement), for the drains of scenario 1. @default false
   */
  queuedFirst?: boolean;
  /**
   * Jobs a queue entry carries (its data `{ jobs: [data, …] }`, `jobs` ÷ this many entries, `concurrency` ÷ this many
   * held): what BullMQ's part would be were a group of submits one queue entry, split at the worker. @default 1
   */
  groupSize?: number;
}

const ADD_CHUNK_SIZE = 100;

/**
 * BullMQ alone on the same Redis: one Queue adding the jobs in chunks with
 * inferq's job options (id, priority, retries, removal) while one Worker with
 * a no-op processor drains them. Returns jobs per second from the first add
 * to the last completion, and what a job cost (the Queue and the Worker both in this
 * process, counted as the worker tier; Redis); the queue's keys (own prefix) are removed afterwards.
 * `queuedFirst`: the adds first, then the drain alone timed and metered.
 */
export async function measureBareBullmq(o: BareBullmqOptions): Promise<{ jobsPerS: number; costs: TierCosts }> {
  const prefix = `{bench-${randomBytes(4).toString('hex')}}`;
  const connection = createRedisConnection(o.redisUrl, 'consumer');
  const queue = new Queue('bare', { connection, prefix, skipVersionCheck: true });
  const group = o.groupSize ?? 1;
  const entries = Math.ceil(o.jobs / group);
  const data = group === 1 ? o.data : { jobs: Array.from({ length: group }, () => o.data) };
  const concurrency = Math.max(1, Math.round(o.concurrency / group));
  const worker = new Worker('bare', async () => {}, { connection, prefix, concurrency, skipVersionCheck: true, autorun: false });
  try {
    let completed = 0;
    const drained = new Promise<void>((resolve) =>
      worker.on('completed', () => {
        if (++completed === entries) resolve();
      }),
    );
    await worker.waitUntilReady();
    const add = async () => {
      for (let i = 0; i < entries; i += ADD_CHUNK_SIZE) {
        const n = Math.min(ADD_CHUNK_SIZE, entries - i);
        await queue.addBulk(Array.from({ length: n }, () => ({ name: JOB_NAME, data, opts: jobOptions(randomUUID(), BULL_PRIORITY.normal) })));
      }
    };
    if (o.queuedFirst) await add();
    const meter = await meterTiers({ redisUrl: o.redisUrl, self: 'worker' });
    const started = performance.now();
    void worker.run();
    if (!o.queuedFirst) await add();
    await drained;
    const jobs = entries * group;
    const jobsPerS = jobs / ((performance.now() - started) / 1000);
    return { jobsPerS, costs: await meter.stop(jobs) };
  } finally {
    await worker.close();
    await queue.obliterate({ force: true });
    await queue.close();
    connection.disconnect();
  }
}
