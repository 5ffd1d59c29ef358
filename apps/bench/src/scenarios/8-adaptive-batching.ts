import type { WorkerStatus } from '@inferq/contracts';
import { base64Body, measureJobs, registerModelAs, runBurst, SHIPPED_WORKER_ENV, submitJobsAtRate } from '../driver.ts';
import { goal, type Scenario } from '../scenario.ts';
import { percentile, round } from '../stats.ts';

const IMAGE_SHAPE = [1, 3, 32, 32];
const CONCURRENCY = 64;
const PACED_JOBS_PER_S = 100;
const LATENCY_TARGET_MS = 100;
/** The best fixed setting of scenario 6's sweep on this box (max batch 64, no delay). */
const BEST_FIXED = { maxBatchSize: 64, maxBatchDelayMs: 0 };

export const adaptiveBatching: Scenario = {
  id: '8',
  title: 'Adaptive batching: the CNN with batching auto against the best fixed setting of the sweep',
  async run(ctx) {
    const burstJobs = ctx.size(3_000, 20);
    const pacedJobs = ctx.size(600, 10);
    const image = new Float32Array(3 * 32 * 32).map((_, i) => Math.sin(i));
    const stack = await ctx.startStack();
    try {
      await registerModelAs(stack, 'cnn-fixed', 'cnn', { maxBatchSize: String(BEST_FIXED.maxBatchSize), maxBatchDelayMs: String(BEST_FIXED.maxBatchDelayMs) });
      await registerModelAs(stack, 'cnn-auto', 'cnn', {
        maxBatchSize: '64',
        maxBatchDelayMs: '20',
        batching: 'auto',
        latencyTargetMs: String(LATENCY_TARGET_MS),
      });
      await stack.startWorker({ ...SHIPPED_WORKER_ENV, HEARTBEAT_INTERVAL_MS: '500', INTRA_OP_THREADS: '1' });
      const run = async (model: string) => {
        const body = base64Body(model, 'image', IMAGE_SHAPE, image);
        // Loads the session and, for auto, gives it batches of every size to measure.
        await runBurst(stack, ctx.size(600, 8), CONCURRENCY, body);
        const burst = await runBurst(stack, burstJobs, CONCURRENCY, body);
        const paced = await measureJobs(stack, pacedJobs, () => submitJobsAtRate(stack.baseUrl, pacedJobs, PACED_JOBS_PER_S, body));
        return { itemsPerS: burst.jobsPerS, avgBatch: burst.avgBatchSize, p50Ms: percentile(paced.latenciesMs, 50), p99Ms: percentile(paced.latenciesMs, 99) };
      };
      const fixed = await run('cnn-fixed');
      const auto = await run('cnn-auto');
      await new Promise((r) => setTimeout(r, 600));
      const workers = (await stack.request('GET', '/v1/workers')).json.items as WorkerStatus[];
      const choice = workers.flatMap((w) => w.adaptiveBatching ?? []).find((a) => a.model === 'cnn-auto');
      const ratio = auto.itemsPerS / fixed.itemsPerS;
      ctx.log(
        `  fixed ${round(fixed.itemsPerS, 0)} items/s p99 ${round(fixed.p99Ms, 1)} ms; auto ` +
          `${round(auto.itemsPerS, 0)} items/s p99 ${round(auto.p99Ms, 1)} ms, chose ` +
          `${choice?.maxBatchSize}/${choice?.maxBatchDelayMs} ms`,
      );
      return {
        id: '8',
        title: this.title,
        metrics: {
          fixed_items_per_s: round(fixed.itemsPerS, 0),
          auto_items_per_s: round(auto.itemsPerS, 0),
          auto_to_fixed_ratio: round(ratio, 3),
          fixed_avg_batch: round(fixed.avgBatch, 1),
          auto_avg_batch: round(auto.avgBatch, 1),
          fixed_p50_ms: round(fixed.p50Ms, 1),
          fixed_p99_ms: round(fixed.p99Ms, 1),
          auto_p50_ms: round(auto.p50Ms, 1),
          auto_p99_ms: round(auto.p99Ms, 1),
          auto_chosen: choice ? `max batch ${choice.maxBatchSize}, delay ${choice.maxBatchDelayMs} ms (${choice.reason})` : 'not reported',
          auto_curve: choice ? choice.curve.map((p) => `${p.items}:${round(p.inferMs, 2)}ms`).join(' ') : '',
        },
        goals: [
          goal('auto ÷ best fixed throughput', round(ratio, 3), '>=', 0.9),
          goal(`auto p99 (queue + inference) at ${PACED_JOBS_PER_S} jobs/s`, round(auto.p99Ms, 1), '<=', LATENCY_TARGET_MS, 'ms'),
        ],
        notes: [
          `Both are the demo CNN under their own names, one worker (intraOpNumThreads 1). Fixed: max batch ` +
            `${BEST_FIXED.maxBatchSize}, delay ${BEST_FIXED.maxBatchDelayMs} ms, the sweep's best here. Auto: ` +
            `bounds 64 / 20 ms, latency target ${LATENCY_TARGET_MS} ms.`,
          `Throughput: ${burstJobs} jobs with ${CONCURRENCY} in flight after a warm-up burst; latency: ` +
            `${pacedJobs} jobs at ${PACED_JOBS_PER_S} jobs/s (open loop), queue_ms + infer_ms.`,
        ],
      };
    } finally {
      await stack.close();
    }
  },
};
