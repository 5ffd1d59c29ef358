import { providerCandidates } from '@inferq/inference';
import { demoModel, type Stack } from '@inferq/test-utils';
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

interface WorkerView {
  modelsLoaded: Array<{ model: string; provider: string }>;
  gpu: { utilizationPercent: number } | null;
}

/** Samples the worker's heartbeat (provider, GPU utilisation from nvidia-smi) once a second until stopped. */
function sampleWorker(stack: Stack): { stop(): Promise<{ provider: string | null; gpuUtilization: number[] }> } {
  const gpuUtilization: number[] = [];
  let provider: string | null = null;
  let running = true;
  const loop = (async () => {
    while (running) {
      const [worker] = (await stack.request('GET', '/v1/workers')).json.items as WorkerView[];
      provider = worker?.modelsLoaded.find((m) => m.model === 'cnn')?.provider ?? provider;
      if (worker?.gpu) gpuUtilization.push(worker.gpu.utilizationPercent);
      await new Promise((r) => setTimeout(r, 1_000));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { provider, gpuUtilization };
    },
  };
}

export const batchingEfficiency: Scenario = {
  id: '1',
  title: 'Batching efficiency: CNN end to end against raw onnxruntime',
  async run(ctx) {
    const jobs = ctx.size(30_000, 40);
    const model = demoModel('cnn');
    const rawItemsPerS = await measureRawOnnx({
      modelPath: model.path,
      input: 'image',
      shape: [MAX_BATCH_SIZE, ...IMAGE_SHAPE.slice(1)],
      intraOpNumThreads: INTRA_OP_THREADS,
      durationMs: ctx.size(5_000, 200),
      // The device's own provider only: a ceiling that fell back to the CPU would flatter the ratio.
      executionProviders: providerCandidates(ctx.device).slice(0, 1),
    });
    const stack = await ctx.startStack();
    try {
      await stack.registerModel('cnn', { maxBatchSize: String(MAX_BATCH_SIZE), maxBatchDelayMs: String(MAX_BATCH_DELAY_MS) });
      await stack.startWorker({ ...SHIPPED_WORKER_ENV, INTRA_OP_THREADS: String(INTRA_OP_THREADS), WORKER_MODELS: 'cnn', WORKER_DEVICES: ctx.device });
      const body = base64Body(
        'cnn',
        'image',
        IMAGE_SHAPE,
        new Float32Array(3 * 32 * 32).map((_, i) => Math.sin(i)),
      );
      // Warm-up: the model load, JIT and connection pools stay out of the measured burst.
      await runBurst(stack, ctx.size(256, 8), CONCURRENCY, body);
      const sampler = sampleWorker(stack);
      const burst = await runBurst(stack, jobs, CONCURRENCY, body);
      const worker = await sampler.stop();
      const gpu = worker.gpuUtilization;
      const ratio = burst.jobsPerS / rawItemsPerS;
      return {
        id: '1',
        title: this.title,
        metrics: {
          device: ctx.device,
          worker_provider: worker.provider,
          jobs,
          raw_onnx_items_per_s: round(rawItemsPerS, 0),
          e2e_items_per_s: round(burst.jobsPerS, 0),
          e2e_to_raw_ratio: round(ratio, 3),
          avg_batch_size: round(burst.avgBatchSize, 1),
          span_s: round(burst.spanS, 2),
          submit_jobs_per_s: round(jobs / burst.submit.elapsedS, 0),
          failed_jobs: burst.failed,
          gpu_utilization_mean_percent: gpu.length === 0 ? null : round(gpu.reduce((a, b) => a + b, 0) / gpu.length, 0),
          gpu_utilization_max_percent: gpu.length === 0 ? null : Math.max(...gpu),
        },
        goals: [goal('e2e ÷ raw onnxruntime, max batch 32', round(ratio, 3), '>=', 0.9)],
        notes: [
          `Saturating load: ${jobs} one-image jobs submitted with ${CONCURRENCY} requests in flight; e2e is first created_at to last finished_at.`,
          `Raw: one onnxruntime-node session in the bench process running batch ${MAX_BATCH_SIZE} back to back; ` +
            `both sides use intraOpNumThreads ${INTRA_OP_THREADS} on device ${ctx.device} (\`--device\`).`,
          "GPU utilisation: the worker heartbeat's nvidia-smi reading, sampled once a second during the burst (null on the CPU).",
        ],
      };
    } finally {
      await stack.close();
    }
  },
};
