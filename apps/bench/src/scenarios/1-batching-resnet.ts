// Scenario 1's realistic model beside the toy CNN: ResNet-50 (generated on demand, ~100 MB), whose 224x224x3 FP32
// input (588 KiB) is past the API's inline limit, so every job's input goes through object storage. The same three
// measurements as the CNN's: the raw onnxruntime ceiling, e2e in both body forms, the worker-side drain.
import { parseDevice, providerCandidates } from '@inferq/inference';
import { RESNET_IMAGE_SIZE } from '@inferq/onnx-model';
import { provideDemoModel, type Stack } from '@inferq/test-utils';
import { bodyTableRow, summariseBursts } from '../burst-figures.ts';
import { runRawOnnx } from '../ceilings/raw-onnx.ts';
import { drainQueued } from '../drain-run.ts';
import {
  BODY_FORMS,
  emptyJobs,
  runBurst,
  SHIPPED_WORKER_ENV,
  submitJobs,
  tensorBody,
  waitForFinished,
  waitForLoadedModel,
  type BodyForm,
  type JobsRun,
} from '../driver.ts';
import type { BenchContext } from '../scenario.ts';
import { round } from '../stats.ts';

const MODEL = 'resnet50';
const MAX_BATCH_SIZE = 16;
const MAX_BATCH_DELAY_MS = 10;
const INTRA_OP_THREADS = 1;
/**
 * Submits in flight: enough to keep a batch of 16 queued at all times (a submit takes milliseconds, a batch a second or
 * more on the CPU). 64 of these 0.6-0.8 MB bodies at once stalled the API's event loop past the producer's 2 s Redis
 * command timeout on this 2-core box under other load (503 QUEUE_UNAVAILABLE).
 */
const CONCURRENCY = 16;
const IMAGE_SHAPE = [1, 3, RESNET_IMAGE_SIZE, RESNET_IMAGE_SIZE];

export interface ResnetPart {
  metrics: Record<string, number | string | null>;
  rows: Array<Array<string | number | null>>;
  notes: string[];
}

/** Runs on `stack` with no other worker running: registers the model, measures, and leaves no worker or job behind. */
export async function measureResnet(ctx: BenchContext, stack: Stack): Promise<ResnetPart> {
  const jobs = ctx.size(320, 3);
  const drainJobs = ctx.size(320, 4);
  const rounds = ctx.size(3, 1);
  const started = performance.now();
  const elapsedS = () => ((performance.now() - started) / 1000).toFixed(1);
  // A smoke run only checks that the part works: ResNet-50's graph at 1/8 of its channels spares CI 100 MB twice over.
  const file = ctx.smoke ? 'resnet50-narrow' : MODEL;
  const model = await provideDemoModel(file);
  ctx.log(`  resnet50: ${file} written in ${elapsedS()} s`);
  const measureRaw = async () => {
    const { itemsPerS } = await runRawOnnx({
      modelPath: model.path,
      input: 'image',
      shape: [MAX_BATCH_SIZE, ...IMAGE_SHAPE.slice(1)],
      intraOpNumThreads: INTRA_OP_THREADS,
      durationMs: ctx.size(10_000, 100),
      executionProviders: providerCandidates(ctx.device).slice(0, 1),
    });
    ctx.log(`  resnet50: raw onnxruntime ${itemsPerS.toFixed(1)} items/s at batch ${MAX_BATCH_SIZE} (${elapsedS()} s)`);
    return itemsPerS;
  };
  const rawBefore = await measureRaw();
  await stack.registerModel(MODEL, { maxBatchSize: String(MAX_BATCH_SIZE), maxBatchDelayMs: String(MAX_BATCH_DELAY_MS) }, file);
  const workerEnv = { ...SHIPPED_WORKER_ENV, INTRA_OP_THREADS: String(INTRA_OP_THREADS), WORKER_MODELS: MODEL, WORKER_DEVICE: ctx.device };
  const image = new Float32Array(3 * RESNET_IMAGE_SIZE * RESNET_IMAGE_SIZE).map((_, i) => Math.sin(i));
  const bodies = Object.fromEntries(BODY_FORMS.map((f) => [f, tensorBody(f, MODEL, 'image', IMAGE_SHAPE, image)])) as Record<BodyForm, () => unknown>;

  const runs: Record<BodyForm, JobsRun[]> = { json: [], binary: [] };
  const worker = await stack.startWorker(workerEnv);
  let inObjectStorage: string;
  let provider: string;
  try {
    // One job per form first: it loads the model (a smoke run's only warm-up) and shows where the inputs went.
    inObjectStorage = await inputsInObjectStorage(stack, bodies);
    ctx.log(`  resnet50: registered, loaded by a worker, ${inObjectStorage} inputs in object storage (${elapsedS()} s)`);
    const warmUpJobs = ctx.size(32, 0);
    if (warmUpJobs > 0) for (const form of BODY_FORMS) await runBurst(stack, warmUpJobs, CONCURRENCY, bodies[form]);
    for (let i = 0; i < rounds; i++)
      for (const form of BODY_FORMS)
        runs[form].push(await runBurst(stack, jobs, CONCURRENCY, bodies[form], { workers: [worker], sessionCores: INTRA_OP_THREADS }));
    provider = await waitForLoadedModel(stack, MODEL, { timeoutMs: 15_000 });
    if (provider !== parseDevice(ctx.device).kind) throw new Error(`the worker runs ResNet-50 on ${provider}, not on ${ctx.device}`);
  } finally {
    await worker.stop();
  }
  ctx.log(`  resnet50: e2e bursts done (${elapsedS()} s)`);
  const drain = await drainQueued(stack, {
    model: MODEL,
    jobs: drainJobs,
    body: bodies.json,
    workerEnv: { ...workerEnv, WORKER_BATCHES_IN_FLIGHT: '2' },
    sessionCores: INTRA_OP_THREADS,
    device: ctx.device,
  });

  ctx.log(`  resnet50: worker-side drain ${drain.itemsPerS.toFixed(1)} items/s (${elapsedS()} s)`);
  // Measured again after: a batch takes a second, so a shared box's drift over the minutes between moves the ceiling; the higher one counts.
  const rawRuns = [rawBefore, await measureRaw()];
  const rawItemsPerS = Math.max(...rawRuns);
  const json = summariseBursts(runs.json, jobs, rawItemsPerS);
  const binary = summariseBursts(runs.binary, jobs, rawItemsPerS);
  const items = (v: number) => round(v, v < 100 ? 1 : 0);
  return {
    metrics: {
      resnet50_model_file: file,
      resnet50_input_bytes: image.byteLength,
      resnet50_inputs_in_object_storage: inObjectStorage,
      resnet50_worker_provider: provider,
      resnet50_jobs: jobs,
      resnet50_raw_onnx_items_per_s: items(rawItemsPerS),
      resnet50_raw_onnx_items_per_s_runs: rawRuns.map((v) => v.toFixed(1)).join(' / '),
      resnet50_e2e_items_per_s: items(json.itemsPerS),
      resnet50_e2e_to_raw_ratio: round(json.ratio, 3),
      resnet50_avg_batch_size: round(json.batch, 1),
      resnet50_e2e_items_per_s_rounds: json.rounds,
      resnet50_binary_e2e_items_per_s: items(binary.itemsPerS),
      resnet50_binary_e2e_to_raw_ratio: round(binary.ratio, 3),
      resnet50_binary_avg_batch_size: round(binary.batch, 1),
      resnet50_worker_side_jobs: drainJobs,
      resnet50_worker_side_items_per_s: items(drain.itemsPerS),
      resnet50_worker_side_to_raw_ratio: round(drain.itemsPerS / rawItemsPerS, 3),
      resnet50_worker_side_avg_batch_size: round(drain.avgBatchSize, 1),
      resnet50_worker_side_main_thread_us_per_job: round(drain.costs.cpuUsPerJob['worker main'], 0),
      resnet50_failed_jobs: json.failed + binary.failed + drain.failed,
    },
    rows: [bodyTableRow(MODEL, 'json', json), bodyTableRow(MODEL, 'binary', binary)],
    notes: [
      'ResNet-50 (resnet50 rows, resnet50_* figures): the generated, architecture-true model (25.5 M weights, batch norm folded; ' +
        "packages/onnx-model; a smoke run's is its graph at 1/8 of the channels, resnet50_model_file), " +
        `one ${RESNET_IMAGE_SIZE}x${RESNET_IMAGE_SIZE}x3 FP32 image (${image.byteLength} bytes) a job, which is past the API's inline limit: ` +
        'every input is written to S3 and read back by the worker (resnet50_inputs_in_object_storage). ' +
        `Max batch ${MAX_BATCH_SIZE}, delay ${MAX_BATCH_DELAY_MS} ms, ${jobs} jobs a burst with ${CONCURRENCY} in flight, ${rounds} rounds a form; ` +
        `its raw ceiling runs batch ${MAX_BATCH_SIZE} before the bursts and again after the drain, the higher counting ` +
        `(resnet50_raw_onnx_items_per_s_runs); its worker-side drain ${drainJobs} jobs with 2 batches in flight.`,
    ],
  };
}

/** Submits one job per body form, waits for them, and returns how many of their inputs were stored by S3 key (`n/n`). */
async function inputsInObjectStorage(stack: Stack, bodies: Record<BodyForm, () => unknown>): Promise<string> {
  for (const form of BODY_FORMS) await submitJobs(stack.baseUrl, 1, 1, bodies[form]);
  await waitForFinished(stack.ctx.pool, BODY_FORMS.length, 120_000);
  const {
    rows: [r],
  } = await stack.ctx.pool.query(
    `SELECT count(*) FILTER (WHERE inputs->0 ? 'key')::int AS keyed, count(*)::int AS n,
            count(*) FILTER (WHERE status <> 'succeeded')::int AS failed
       FROM jobs`,
  );
  await emptyJobs(stack.ctx.pool);
  if (r.failed > 0) throw new Error(`${r.failed} of the first ${r.n} ResNet-50 jobs did not succeed`);
  if (r.keyed !== r.n) throw new Error(`${r.n - r.keyed} of ${r.n} ResNet-50 inputs were kept inline, not in object storage`);
  return `${r.keyed}/${r.n}`;
}
