import type { TestProcess } from '@inferq/test-utils';
import { emptyJobs, registerModelAs, SHIPPED_WORKER_ENV, submitJobsAtRate, waitForFinished } from '../driver.ts';
import { goal, type Scenario } from '../scenario.ts';
import { round } from '../stats.ts';

const IMAGE_SHAPE = [1, 3, 32, 32];
const JOBS_PER_S = 150;
/** A long delay, as a model tuned for throughput would have: fixed batching makes the short deadlines wait it out. */
const MAX_BATCH_DELAY_MS = 60;
/** Deadlines cycle through these, from submit. */
const DEADLINES_MS = [40, 80, 160, 320];

export const deadlines: Scenario = {
  id: '9',
  title: 'Deadline-aware batching: deadline hit rate against the same load with fixed batching',
  async run(ctx) {
    const jobs = ctx.size(1_200, 12);
    const image = Buffer.from(new Float32Array(3 * 32 * 32).map((_, i) => Math.sin(i)).buffer).toString('base64');
    const body = (i: number) => ({
      model: 'cnn',
      inputs: [{ name: 'image', datatype: 'FP32', shape: IMAGE_SHAPE, data: image }],
      deadline: new Date(Date.now() + DEADLINES_MS[i % DEADLINES_MS.length]!).toISOString(),
    });
    const stack = await ctx.startStack();
    let worker: TestProcess | undefined;
    const outcome = async (scheduling: boolean) => {
      await worker?.stop('SIGTERM');
      worker = await stack.startWorker({ ...SHIPPED_WORKER_ENV, INTRA_OP_THREADS: '1', DEADLINE_SCHEDULING: String(scheduling) });
      // Warm-up: loads the session and measures the model (no deadlines).
      await submitJobsAtRate(stack.baseUrl, ctx.size(200, 4), JOBS_PER_S, () => ({ ...body(0), deadline: undefined }));
      await waitForFinished(stack.ctx.pool, ctx.size(200, 4));
      await emptyJobs(stack.ctx.pool);
      // A 40 ms deadline can pass before a busy API reads the request (400 VALIDATION_FAILED at /body/deadline): a miss.
      const sent = await submitJobsAtRate(stack.baseUrl, jobs, JOBS_PER_S, body, undefined, (status, code) => status === 400 && code === 'VALIDATION_FAILED');
      await waitForFinished(stack.ctx.pool, jobs - sent.refused);
      const {
        rows: [r],
      } = await stack.ctx.pool.query<{ hit: number; late: number; expired: number; unrun: number }>(
        `SELECT count(*) FILTER (WHERE status = 'succeeded' AND finished_at <= deadline_at)::int AS hit,
                count(*) FILTER (WHERE status = 'succeeded' AND finished_at > deadline_at)::int AS late,
                count(*) FILTER (WHERE status = 'expired')::int AS expired,
                count(*) FILTER (WHERE status = 'expired' AND error_message LIKE 'cannot finish%')::int AS unrun
           FROM jobs`,
      );
      await emptyJobs(stack.ctx.pool);
      return { hitRate: r!.hit / jobs, late: r!.late, expired: r!.expired, unrun: r!.unrun, refused: sent.refused };
    };
    try {
      await registerModelAs(stack, 'cnn', 'cnn', { maxBatchSize: '32', maxBatchDelayMs: String(MAX_BATCH_DELAY_MS) });
      const aware = await outcome(true);
      const fixed = await outcome(false);
      ctx.log(`  hit rate: deadline-aware ${round(aware.hitRate, 3)}, fixed ${round(fixed.hitRate, 3)}`);
      return {
        id: '9',
        title: this.title,
        metrics: {
          jobs,
          jobs_per_s: JOBS_PER_S,
          aware_hit_rate: round(aware.hitRate, 3),
          fixed_hit_rate: round(fixed.hitRate, 3),
          aware_finished_late: aware.late,
          fixed_finished_late: fixed.late,
          aware_expired: aware.expired,
          aware_expired_unrun: aware.unrun,
          fixed_expired: fixed.expired,
          aware_refused_deadline_passed: aware.refused,
          fixed_refused_deadline_passed: fixed.refused,
        },
        goals: [goal('deadline-aware hit rate', round(aware.hitRate, 3), '>=', 0.95)],
        notes: [
          `The demo CNN, max batch 32, max delay ${MAX_BATCH_DELAY_MS} ms, one worker; ${jobs} one-image jobs ` +
            `at a steady ${JOBS_PER_S}/s (open loop) with deadlines cycling through ${DEADLINES_MS.join(', ')} ms after submit.`,
          'A hit is a job that succeeded by its deadline. Fixed: the same worker with DEADLINE_SCHEDULING=false ' +
            '(deadlines only expire jobs still queued at them). A job whose deadline passed before the API read it is refused (400) and counts as a miss.',
        ],
      };
    } finally {
      await stack.close();
    }
  },
};
