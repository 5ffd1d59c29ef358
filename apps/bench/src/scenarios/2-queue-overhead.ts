import type { InferJobPayload } from '@inferq/contracts';
import { mlpRows, requiredTestVar } from '@inferq/test-utils';
import { measureBareBullmq } from '../ceilings/bare-bullmq.ts';
import { base64Body, runBurst, SHIPPED_WORKER_ENV } from '../driver.ts';
import { goal, type Scenario } from '../scenario.ts';
import { round } from '../stats.ts';

const MAX_BATCH_SIZE = 64;
const MAX_BATCH_DELAY_MS = 2;
/** More requests in flight let the API's group commit gather larger groups; 128 saturates it on 2 cores. */
const CONCURRENCY = 128;
/** inferq's worker holds three batches' worth of queue jobs at once (two in flight, one filling); the bare worker gets as many. */
const BARE_WORKER_CONCURRENCY = 3 * MAX_BATCH_SIZE;

export const queueOverhead: Scenario = {
  id: '2',
  title: 'Queue overhead: tiny MLP end to end against bare BullMQ',
  async run(ctx) {
    const jobs = ctx.size(30_000, 50);
    // inferq's queue payload for this job, with the same job options.
    const payload: InferJobPayload = { modelVersion: 1, batchKey: 'features:64' };
    const bare = await measureBareBullmq({ redisUrl: requiredTestVar('REDIS_URL'), jobs, concurrency: BARE_WORKER_CONCURRENCY, data: payload });
    const bareJobsPerS = bare.jobsPerS;
    const stack = await ctx.startStack();
    try {
      await stack.registerModel('mlp', { maxBatchSize: String(MAX_BATCH_SIZE), maxBatchDelayMs: String(MAX_BATCH_DELAY_MS) });
      const worker = await stack.startWorker({ ...SHIPPED_WORKER_ENV, INTRA_OP_THREADS: '1', WORKER_MODELS: 'mlp' });
      const body = base64Body('mlp', 'features', [1, 64], mlpRows(1, 1));
      await runBurst(stack, ctx.size(500, 8), CONCURRENCY, body);
      const burst = await runBurst(stack, jobs, CONCURRENCY, body, { workers: [worker] });
      const ratio = burst.jobsPerS / bareJobsPerS;
      return {
        id: '2',
        title: this.title,
        metrics: {
          jobs,
          bare_bullmq_jobs_per_s: round(bareJobsPerS, 0),
          e2e_jobs_per_s: round(burst.jobsPerS, 0),
          e2e_to_bare_ratio: round(ratio, 3),
          avg_batch_size: round(burst.avgBatchSize, 1),
          span_s: round(burst.spanS, 2),
          submit_jobs_per_s: round(jobs / burst.submit.elapsedS, 0),
          failed_jobs: burst.failed,
          api_cpu_us_per_job: round(burst.costs.cpuUsPerJob.api, 1),
          worker_cpu_us_per_job: round(burst.costs.cpuUsPerJob.worker, 1),
          redis_cmds_per_job: round(burst.costs.redisCmdsPerJob, 2),
          bare_redis_cmds_per_job: round(bare.costs.redisCmdsPerJob, 2),
        },
        costs: [
          { name: 'e2e', costs: burst.costs, measuredJobsPerS: round(burst.jobsPerS, 0) },
          { name: 'bare BullMQ', costs: bare.costs, measuredJobsPerS: round(bareJobsPerS, 0), ceiling: true },
        ],
        goals: [goal('e2e ÷ bare BullMQ', round(ratio, 3), '>=', 0.5), goal('e2e jobs/s', round(burst.jobsPerS, 0), '>=', 3000, 'jobs/s')],
        notes: [
          `Saturating load: ${jobs} one-row MLP jobs submitted with ${CONCURRENCY} requests in flight; e2e is first created_at to last finished_at.`,
          `Bare: one BullMQ Queue (addBulk of 100, inferq's job options) and one Worker (concurrency ` +
            `${BARE_WORKER_CONCURRENCY}, no-op processor) in the bench process on the same Redis, first add to last completion; ` +
            'its tier costs count the bench process (Queue and Worker) as the worker tier.',
        ],
      };
    } finally {
      await stack.close();
    }
  },
};
