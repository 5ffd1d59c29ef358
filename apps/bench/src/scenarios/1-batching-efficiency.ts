import { demoModel } from '@inferq/test-utils';
import { measureRawOnnx } from '../ceilings/raw-onnx.ts';
import { base64Body, runBurst, SHIPPED_WORKER_ENV } from '../driver.ts';
import { goal, type Scenario } from '../scenario.ts';
import { round } from '../stats.ts';

const MAX_BATCH_SIZE = 32;
const MAX_BATCH_DELAY_MS = 5;
/** One core for the session; the other is left to the API, Postgres, Redis and this driver. */
const INTRA_OP_THREADS = 1;
const CONCURRENCY = 64;
const IMAGE_SHAPE = [1, 3, 32, 32];

export const batchingEfficiency: Scenario = {
  id: '1',
  title: 'Batching efficiency: CNN end to end against raw onnxruntime',
  async run(ctx) {
    const jobs = ctx.size(30_000, 40);
    const model = demoModel('cnn');
    const rawItemsPerS = await measureRawOnnx({
      modelPath: model.path, input: 'image', shape: [MAX_BATCH_SIZE, ...IMAGE_SHAPE.slice(1)],
      intraOpNumThreads: INTRA_OP_THREADS, durationMs: ctx.size(5_000, 200),
    });
    const stack = await ctx.startStack();
    try {
      await stack.registerModel('cnn', { maxBatchSize: String(MAX_BATCH_SIZE), maxBatchDelayMs: String(MAX_BATCH_DELAY_MS) });
      await stack.startWorker({ ...SHIPPED_WORKER_ENV, INTRA_OP_THREADS: String(INTRA_OP_THREADS), WORKER_MODELS: 'cnn' });
      const body = base64Body('cnn', 'image', IMAGE_SHAPE, new Float32Array(3 * 32 * 32).map((_, i) => Math.sin(i)));
      // Warm-up: the model load, JIT and connection pools stay out of the measured burst.
      await runBurst(stack, ctx.size(256, 8), CONCURRENCY, body);
      const burst = await runBurst(stack, jobs, CONCURRENCY, body);
      const ratio = burst.jobsPerS / rawItemsPerS;
      return {
        id: '1',
        title: this.title,
        metrics: {
          jobs,
          raw_onnx_items_per_s: round(rawItemsPerS, 0),
          e2e_items_per_s: round(burst.jobsPerS, 0),
          e2e_to_raw_ratio: round(ratio, 3),
          avg_batch_size: round(burst.avgBatchSize, 1),
          span_s: round(burst.spanS, 2),
          submit_jobs_per_s: round(jobs / burst.submit.elapsedS, 0),
          failed_jobs: burst.failed,
        },
        goals: [goal('e2e ÷ raw onnxruntime, max batch 32', round(ratio, 3), '>=', 0.9)],
        notes: [
          `Saturating load: ${jobs} one-image jobs submitted with ${CONCURRENCY} requests in flight; e2e is first created_at to last finished_at.`,
          `Raw: one onnxruntime-node session in the bench process running batch ${MAX_BATCH_SIZE} back to back; both sides use intraOpNumThreads ${INTRA_OP_THREADS}.`,
        ],
      };
    } finally {
      await stack.close();
    }
  },
};
