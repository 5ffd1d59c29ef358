/**
 * BullMQ's own part of a job's bookkeeping by how many jobs a queue entry carries: what a group of submits as one
 * entry, split at the worker, would save before it is built. `node --import tsx apps/bench/src/costs/bullmq-groups.ts
 * [jobs] [group sizes, a comma list] [rounds]` (default 30,000 jobs; 1,4,8,16,32; 2 rounds, the sizes alternating) on the
 * Redis REDIS_URL names: a bare BullMQ Worker with a no-op processor drains the jobs queued first (measureBareBullmq),
 * an entry holding a CNN job's queue payload once a job, as many jobs held as inferq's worker holds (3 batches of 32).
 * Prints, a job, the bench process's CPU (BullMQ's producer is idle then: the drain's consumer alone) and Redis's, and
 * Redis's commands.
 */
import { requiredTestVar } from '@inferq/test-utils';
import { measureBareBullmq } from '../ceilings/bare-bullmq.ts';
import { CNN_QUEUE_PAYLOAD } from '../scenarios/1-batching-efficiency.ts';

const jobs = Number(process.argv[2] ?? 30_000);
const sizes = (process.argv[3] ?? '1,4,8,16,32').split(',').map(Number);
const rounds = Number(process.argv[4] ?? 2);
const HELD_JOBS = 3 * 32;

for (let r = 0; r < rounds; r++) {
  for (const groupSize of sizes) {
    const { jobsPerS, costs } = await measureBareBullmq({
      redisUrl: requiredTestVar('REDIS_URL'),
      jobs,
      concurrency: HELD_JOBS,
      data: CNN_QUEUE_PAYLOAD,
      queuedFirst: true,
      groupSize,
    });
    const us = costs.cpuUsPerJob;
    console.log(
      JSON.stringify({
        groupSize,
        jobsPerS: Math.round(jobsPerS),
        workerUs: Math.round(us.worker ?? NaN),
        redisUs: Math.round(us.redis ?? NaN),
        redisCmdsPerJob: costs.redisCmdsPerJob === null ? null : Math.round(costs.redisCmdsPerJob * 100) / 100,
      }),
    );
  }
}
process.exit(0);
