import { demoModel } from '@inferq/test-utils';
import { measureRawOnnx } from '../ceilings/raw-onnx.ts';
import { base64Body, measureJobs, registerModelAs, runBurst, SHIPPED_WORKER_ENV, submitJobsAtRate } from '../driver.ts';
import type { Scenario, Series } from '../scenario.ts';
import { percentile, round } from '../stats.ts';

const MAX_BATCH_SIZES = [1, 4, 16, 64];
const MAX_BATCH_DELAYS_MS = [0, 2, 10];
const CONCURRENCY = 64;
/** The steady load latency is measured at: well under what a batch size of 1 sustains on 2 cores. */
const PACED_JOBS_PER_S = 100;
const INTRA_OP_THREADS = 1;
const IMAGE_SHAPE = [1, 3, 32, 32];

interface SettingResult {
  maxBatchSize: number;
  maxBatchDelayMs: number;
  itemsPerS: number;
  rawItemsPerS: number;
  saturatedAvgBatch: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
  pacedAvgBatch: number | null;
}

export const batchSizeSweep: Scenario = {
  id: '6',
  title: 'Batch-size sweep: CNN throughput and latency per max batch size and delay',
  async run(ctx) {
    const burstJobs = ctx.size(3_000, 20);
    const pacedJobs = ctx.size(600, 10);
    const settings = MAX_BATCH_SIZES.flatMap((maxBatchSize) =>
      MAX_BATCH_DELAYS_MS.map((maxBatchDelayMs) => ({ maxBatchSize, maxBatchDelayMs, name: `cnn-b${maxBatchSize}-d${maxBatchDelayMs}` })),
    );
    const image = new Float32Array(3 * 32 * 32).map((_, i) => Math.sin(i));
    const rawItemsPerS = new Map<number, number>();
    for (const b of MAX_BATCH_SIZES) {
      const shape = [b, ...IMAGE_SHAPE.slice(1)];
      rawItemsPerS.set(
        b,
        await measureRawOnnx({
          modelPath: demoModel('cnn').path,
          input: 'image',
          shape,
          intraOpNumThreads: INTRA_OP_THREADS,
          durationMs: ctx.size(2_000, 100),
        }),
      );
    }
    const stack = await ctx.startStack();
    const results: SettingResult[] = [];
    try {
      // Batching settings are fixed per model version, so each setting is the CNN under its own name.
      for (const s of settings)
        await registerModelAs(stack, s.name, 'cnn', { maxBatchSize: String(s.maxBatchSize), maxBatchDelayMs: String(s.maxBatchDelayMs) });
      // One worker serves every setting; only one setting has jobs at a time.
      await stack.startWorker({ ...SHIPPED_WORKER_ENV, INTRA_OP_THREADS: String(INTRA_OP_THREADS) });
      for (const s of settings) {
        const body = base64Body(s.name, 'image', IMAGE_SHAPE, image);
        await runBurst(stack, ctx.size(128, 4), CONCURRENCY, body); // loads this setting's session
        const burst = await runBurst(stack, burstJobs, CONCURRENCY, body);
        const paced = await measureJobs(stack, pacedJobs, () => submitJobsAtRate(stack.baseUrl, pacedJobs, PACED_JOBS_PER_S, body));
        const r: SettingResult = {
          maxBatchSize: s.maxBatchSize,
          maxBatchDelayMs: s.maxBatchDelayMs,
          itemsPerS: burst.jobsPerS,
          rawItemsPerS: rawItemsPerS.get(s.maxBatchSize)!,
          saturatedAvgBatch: burst.avgBatchSize,
          p50Ms: percentile(paced.latenciesMs, 50),
          p99Ms: percentile(paced.latenciesMs, 99),
          pacedAvgBatch: paced.avgBatchSize,
        };
        ctx.log(`  ${s.name}: ${round(r.itemsPerS, 0)} items/s, p99 ${round(r.p99Ms, 1)} ms at ${PACED_JOBS_PER_S}/s`);
        results.push(r);
      }
    } finally {
      await stack.close();
    }
    const series = (y: (r: SettingResult) => number | null): Series[] =>
      MAX_BATCH_DELAYS_MS.map((d) => ({
        name: `max delay ${d} ms`,
        points: results.filter((r) => r.maxBatchDelayMs === d).map((r) => ({ x: r.maxBatchSize, y: y(r) ?? 0 })),
      }));
    const best = results.reduce((a, b) => (b.itemsPerS > a.itemsPerS ? b : a));
    const unbatched = results.find((r) => r.maxBatchSize === 1 && r.maxBatchDelayMs === 0)!;
    return {
      id: '6',
      title: this.title,
      metrics: {
        settings: results.length,
        burst_jobs_per_setting: burstJobs,
        paced_jobs_per_s: PACED_JOBS_PER_S,
        best_items_per_s: round(best.itemsPerS, 0),
        best_setting: `max batch ${best.maxBatchSize}, delay ${best.maxBatchDelayMs} ms`,
        unbatched_items_per_s: round(unbatched.itemsPerS, 0),
        batching_speedup: round(best.itemsPerS / unbatched.itemsPerS, 2),
      },
      goals: [],
      table: {
        columns: [
          'max batch size',
          'max delay ms',
          'items/s',
          'raw onnx items/s',
          'e2e ÷ raw',
          'p50 ms',
          'p99 ms',
          'avg batch (saturated)',
          'avg batch (paced)',
        ],
        rows: results.map((r) => [
          r.maxBatchSize,
          r.maxBatchDelayMs,
          round(r.itemsPerS, 0),
          round(r.rawItemsPerS, 0),
          round(r.itemsPerS / r.rawItemsPerS, 3),
          round(r.p50Ms, 1),
          round(r.p99Ms, 1),
          round(r.saturatedAvgBatch, 1),
          round(r.pacedAvgBatch, 1),
        ]),
      },
      charts: [
        { file: '6-throughput', title: 'CNN items/s at saturating load', xLabel: 'max batch size', yLabel: 'items/s', series: series((r) => r.itemsPerS) },
        {
          file: '6-p99-latency',
          title: `CNN p99 latency at ${PACED_JOBS_PER_S} jobs/s`,
          xLabel: 'max batch size',
          yLabel: 'p99 queue wait + inference (ms)',
          series: series((r) => r.p99Ms),
        },
      ],
      notes: [
        `Throughput: ${burstJobs} one-image jobs per setting with ${CONCURRENCY} requests in flight, first created_at to last finished_at.`,
        `Latency: ${pacedJobs} jobs per setting sent at a steady ${PACED_JOBS_PER_S} jobs/s (open loop); ` +
          `queue_ms + infer_ms from the jobs table. At saturation the queue wait only measures the backlog the burst built.`,
        `One worker (intraOpNumThreads ${INTRA_OP_THREADS}) serves every setting, each the CNN registered ` +
          `under its own name; raw onnx is one session in the bench process running that batch size back to back.`,
      ],
    };
  },
};
