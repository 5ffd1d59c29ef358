import type { Pool } from '@inferq/db';
import { waitFor } from '@inferq/test-utils';
import { emptyJobs, mlpJobBody, SHIPPED_WORKER_ENV, submitJobs, submitJobsAtRate, waitForFinished } from '../driver.ts';
import { goal, type Scenario } from '../scenario.ts';
import { percentile, round } from '../stats.ts';

const MAX_BATCH_SIZE = 64;
const MAX_BATCH_DELAY_MS = 2;
const BACKLOG_CONCURRENCY = 128;
const HIGH_JOBS_PER_S = 50;

/** Queue waits of the high jobs created while low jobs were still waiting (before the last low job started). */
async function highWaitsDuringDrain(pool: Pool): Promise<number[]> {
  const { rows } = await pool.query(
    `SELECT queue_ms FROM jobs WHERE priority = 'high' AND status = 'succeeded'
        AND created_at < (SELECT max(started_at) FROM jobs WHERE priority = 'low')`,
  );
  return rows.map((r) => r.queue_ms as number);
}

/** Low jobs per second from the first low job started to the last one finished. */
async function lowDrain(pool: Pool): Promise<{ jobs: number; spanS: number }> {
  const {
    rows: [r],
  } = await pool.query(
    "SELECT count(*)::int AS n, extract(epoch FROM max(finished_at) - min(started_at))::float AS s FROM jobs WHERE priority = 'low' AND status = 'succeeded'",
  );
  return { jobs: r.n, spanS: r.s ?? 0 };
}

const highWaits = async (pool: Pool): Promise<number[]> =>
  (await pool.query("SELECT queue_ms FROM jobs WHERE priority = 'high' AND status = 'succeeded'")).rows.map((r) => r.queue_ms as number);

export const priorityIsolation: Scenario = {
  id: '4',
  title: 'Priority isolation: high-priority queue wait while a low-priority backlog drains',
  async run(ctx) {
    const backlogJobs = ctx.size(50_000, 200);
    const highJobs = HIGH_JOBS_PER_S * ctx.size(12, 2);
    const stack = await ctx.startStack();
    try {
      const { pool } = stack.ctx;
      await stack.registerModel('mlp', { maxBatchSize: String(MAX_BATCH_SIZE), maxBatchDelayMs: String(MAX_BATCH_DELAY_MS) });
      const low = mlpJobBody('low');
      const high = mlpJobBody('high');
      const backlog = await submitJobs(stack.baseUrl, backlogJobs, BACKLOG_CONCURRENCY, () => low);
      ctx.log(`  backlog of ${backlogJobs} low jobs submitted in ${backlog.elapsedS.toFixed(1)} s`);
      await stack.startWorker({ ...SHIPPED_WORKER_ENV, INTRA_OP_THREADS: '1', WORKER_MODELS: 'mlp' });
      // The stream starts once the backlog starts draining, so the model load stays out of the high jobs' waits.
      await waitFor(async () => (await pool.query("SELECT 1 FROM jobs WHERE status = 'succeeded' LIMIT 1")).rowCount, {
        timeoutMs: 60_000,
        what: 'the backlog to start draining',
      });
      await submitJobsAtRate(stack.baseUrl, highJobs, HIGH_JOBS_PER_S, () => high);
      await waitForFinished(pool, backlogJobs + highJobs);
      const during = await highWaitsDuringDrain(pool);
      const allHigh = await highWaits(pool);
      const drain = await lowDrain(pool);
      // The ceiling: the same stream on an empty queue, same worker.
      await emptyJobs(pool);
      await submitJobsAtRate(stack.baseUrl, highJobs, HIGH_JOBS_PER_S, () => high);
      await waitForFinished(pool, highJobs);
      const idle = await highWaits(pool);

      const p99 = percentile(during, 99);
      const idleP99 = percentile(idle, 99);
      return {
        id: '4',
        title: this.title,
        metrics: {
          backlog_low_jobs: backlogJobs,
          backlog_submit_jobs_per_s: round(backlogJobs / backlog.elapsedS, 0),
          low_drain_jobs_per_s: round(drain.jobs / drain.spanS, 0),
          low_drain_s: round(drain.spanS, 1),
          high_jobs_per_s: HIGH_JOBS_PER_S,
          high_jobs: highJobs,
          high_jobs_during_drain: during.length,
          high_queue_wait_p50_ms: percentile(during, 50),
          high_queue_wait_p99_ms: p99,
          high_queue_wait_max_ms: during.length === 0 ? null : Math.max(...during),
          high_queue_wait_p99_all_ms: percentile(allHigh, 99),
          idle_high_queue_wait_p50_ms: percentile(idle, 50),
          idle_high_queue_wait_p99_ms: idleP99,
          drain_to_idle_p99_ratio: p99 === null || !idleP99 ? null : round(p99 / idleP99, 2),
        },
        goals: [goal('high-priority queue wait p99 while the backlog drains', p99, '<=', 50, 'ms')],
        notes: [
          `${backlogJobs} low-priority one-row MLP jobs submitted over HTTP (${BACKLOG_CONCURRENCY} in flight) ` +
            `before any worker ran; then one worker (max batch ${MAX_BATCH_SIZE}, delay ${MAX_BATCH_DELAY_MS} ms, ` +
            `intraOpNumThreads 1) and, once the first low job finished, ${highJobs} high-priority jobs at a ` +
            `steady ${HIGH_JOBS_PER_S}/s (open loop).`,
          'Queue wait is queue_ms from the jobs table (created to batch start). "During drain" counts the high ' +
            'jobs created before the last low job started; "all" every high job of the stream.',
          `Ceiling: the same high stream on an empty queue with the same worker (idle_*); the ratio is the backlog's cost to a high job.`,
        ],
      };
    } finally {
      await stack.close();
    }
  },
};
