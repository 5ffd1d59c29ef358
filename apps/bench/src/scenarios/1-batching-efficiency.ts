import type { InferJobPayload } from '@inferq/contracts';
import { parseDevice, providerCandidates } from '@inferq/inference';
import { demoModel, requiredTestVar } from '@inferq/test-utils';
import { measureBareBullmq } from '../ceilings/bare-bullmq.ts';
import { runRawOnnx } from '../ceilings/raw-onnx.ts';
import { loadBenchEnv } from '../bench-env.ts';
import { drainQueued, type DrainRun } from '../drain-run.ts';
import { BODY_FORMS, runBurst, SHIPPED_WORKER_ENV, tensorBody, waitForLoadedModel, type BodyForm, type JobsRun } from '../driver.ts';
import { BODY_TABLE_COLUMNS, bodyTableRow, cpuFigure, summariseBursts } from '../burst-figures.ts';
import { sampleGpu, type GpuUtilisation } from '../gpu-sampler.ts';
import { goalOverRuns, type BenchContext, type Scenario } from '../scenario.ts';
import { median, round } from '../stats.ts';
import { deviceTimeFromEnv } from '../timed-device/device-time.ts';
import { timedDeviceDrains } from '../timed-device/timed-drain.ts';
import { workerEntries } from '../worker-entries.ts';
import { measureResnet } from './1-batching-resnet.ts';

const MAX_BATCH_SIZE = 32;
const MAX_BATCH_DELAY_MS = 5;
/** One core for the session; the other is left to the API, Postgres, Redis and this driver. */
const INTRA_OP_THREADS = 1;
const CONCURRENCY = 64;
const IMAGE_SHAPE = [1, 3, 32, 32];
const IMAGE_BYTES = IMAGE_SHAPE.reduce((n, d) => n * d, 1) * Float32Array.BYTES_PER_ELEMENT;

/**
 * The API's QUEUE_CARRIED_INPUTS_MB here: enough that every job of a drain's backlog carries its input beside its
 * queue entry (the input + 128 bytes of Redis a waiting job, with room to spare), as an operator sizes Redis for a
 * fast device (docs/operations.md). The shipped default, 64 MiB a model, carries about 5,000 waiting CNN jobs: a
 * deeper backlog has the claims of the rest read their inputs out of Postgres.
 */
const carriedInputsMb = (backlog: number): number => Math.ceil((backlog * (IMAGE_BYTES + 1024)) / 2 ** 20);

/** A CNN job's queue payload as the API writes it (its input carried): the bare BullMQ floor's job data. */
export const CNN_QUEUE_PAYLOAD: InferJobPayload = {
  modelVersion: 1,
  batchKey: 'image:FP32:3x32x32',
  priority: 'normal',
  inputs: [{ name: 'image', datatype: 'FP32', shape: IMAGE_SHAPE, bytes: IMAGE_BYTES, at: 0 }],
};

/** Jobs a queue entry carries in the grouped BullMQ floor: a submit group's size where clients send one job a request. */
const FLOOR_GROUP_SIZE = 8;

/**
 * The worker-side drain's WORKER_BATCHES_IN_FLIGHT values, the first the
 * reported one: BENCH_BATCHES_IN_FLIGHT (a comma list), else 2 on the CPU
 * (one session thread, two cores) and 2, 4, 8 on a GPU, whose batches may run
 * faster than a claim and a result write.
 */
function drainInFlight(device: string): number[] {
  const listed = loadBenchEnv().BENCH_BATCHES_IN_FLIGHT;
  const values = (listed ?? (device === 'cpu' ? '2' : '2,4,8')).split(',').map(Number);
  if (values.some((v) => !Number.isInteger(v) || v < 1 || v > 16)) throw new Error(`BENCH_BATCHES_IN_FLIGHT must list integers 1-16, not "${listed}"`);
  return values;
}

/**
 * WORKER_FEEDERS values for one more timed-device drain each: BENCH_FEEDERS (a
 * comma list), else 2 on this kind of box (two cores: more feeders than cores
 * only contend) and 2, 4 on a GPU host.
 */
function feederSweep(device: string): number[] {
  const listed = loadBenchEnv().BENCH_FEEDERS;
  const values = (listed ?? (device === 'cpu' ? '2' : '2,4')).split(',').filter(Boolean).map(Number);
  if (values.some((v) => !Number.isInteger(v) || v < 1 || v > 16)) throw new Error(`BENCH_FEEDERS must list integers 1-16, not "${listed}"`);
  return values;
}

export const batchingEfficiency: Scenario = {
  id: '1',
  title: 'Batching efficiency: CNN and ResNet-50 end to end against raw onnxruntime',
  async run(ctx) {
    const jobs = ctx.size(30_000, 40);
    const drainJobs = ctx.size(30_000, 200);
    // Each drain's worker first runs this many jobs unmeasured: the figures are a worker's that has run a while, not its first seconds.
    const warmupJobs = ctx.size(40_000, 100);
    const model = demoModel('cnn');
    const rawGpuSampler = sampleGpu(ctx.device);
    const rawOptions = {
      modelPath: model.path,
      input: 'image',
      shape: [MAX_BATCH_SIZE, ...IMAGE_SHAPE.slice(1)],
      intraOpNumThreads: INTRA_OP_THREADS,
      durationMs: ctx.size(5_000, 200),
      // The device's own provider only: a ceiling that fell back to the CPU would flatter the ratio.
      executionProviders: providerCandidates(ctx.device).slice(0, 1),
    };
    const raw = await runRawOnnx(rawOptions);
    const rawItemsPerS = raw.itemsPerS;
    const rawGpu = await rawGpuSampler.stop();
    const carriedMb = carriedInputsMb(Math.max(jobs, drainJobs));
    const stack = await ctx.startStack({ QUEUE_CARRIED_INPUTS_MB: String(carriedMb) });
    try {
      await stack.registerModel('cnn', { maxBatchSize: String(MAX_BATCH_SIZE), maxBatchDelayMs: String(MAX_BATCH_DELAY_MS) });
      const workerEnv = { ...SHIPPED_WORKER_ENV, INTRA_OP_THREADS: String(INTRA_OP_THREADS), WORKER_MODELS: 'cnn', WORKER_DEVICE: ctx.device };
      const worker = await stack.startWorker(workerEnv);
      const tiers = { workers: [worker], sessionCores: INTRA_OP_THREADS };
      const image = new Float32Array(3 * 32 * 32).map((_, i) => Math.sin(i));
      const bodies = Object.fromEntries(BODY_FORMS.map((f) => [f, tensorBody(f, 'cnn', 'image', IMAGE_SHAPE, image)])) as Record<BodyForm, () => unknown>;
      // Warm-up: the model load, JIT and connection pools stay out of the measured bursts.
      for (const form of BODY_FORMS) await runBurst(stack, ctx.size(256, 8), CONCURRENCY, bodies[form]);
      const rounds = ctx.size(3, 1);
      const runs: Record<BodyForm, JobsRun[]> = { json: [], binary: [] };
      const gpuSampler = sampleGpu(ctx.device);
      // The forms alternate, so drift on the machine hits both alike.
      for (let i = 0; i < rounds; i++) for (const form of BODY_FORMS) runs[form].push(await runBurst(stack, jobs, CONCURRENCY, bodies[form], tiers));
      const gpu = await gpuSampler.stop();
      const provider = await waitForLoadedModel(stack, 'cnn', { timeoutMs: 15_000 });
      // A worker that fell back to the CPU would make every GPU figure a CPU one.
      if (provider !== parseDevice(ctx.device).kind)
        throw new Error(`the worker runs the CNN on ${provider}, not on ${ctx.device}: its log (model loaded, failedProviders) says why`);
      // The worker's side alone: the e2e worker goes, the jobs queue up, then one worker drains them.
      await worker.stop();
      const drainWith = (inFlight: number) =>
        drainQueued(stack, {
          model: 'cnn',
          jobs: drainJobs,
          warmupJobs,
          body: bodies.json,
          workerEnv: { ...workerEnv, WORKER_BATCHES_IN_FLIGHT: String(inFlight) },
          sessionCores: INTRA_OP_THREADS,
          device: ctx.device,
        });
      // The reported setting's drain runs `rounds` times (its figures the median drain's, its goal with the range); the sweep's once each.
      const [reported, ...swept] = drainInFlight(ctx.device);
      const drainRounds: DrainRun[] = [];
      for (let i = 0; i < rounds; i++) drainRounds.push(await drainWith(reported!));
      const medianDrain = median(drainRounds.map((r) => r.itemsPerS));
      const drains = [{ inFlight: reported!, run: drainRounds.find((r) => r.itemsPerS === medianDrain)! }];
      for (const inFlight of swept) drains.push({ inFlight, run: await drainWith(inFlight) });
      // BullMQ's own part of the bookkeeping: a bare Worker draining as many queued jobs (held as inferq's worker holds them).
      const bareDrain = {
        redisUrl: requiredTestVar('REDIS_URL'),
        jobs: drainJobs,
        concurrency: 3 * MAX_BATCH_SIZE,
        data: CNN_QUEUE_PAYLOAD,
        queuedFirst: true,
      };
      const bullmqFloor = await measureBareBullmq(bareDrain);
      // And were a group of submits one queue entry (architecture.md step 7): what that lever would leave of it.
      const bullmqGroupedFloor = { groupSize: FLOOR_GROUP_SIZE, ...(await measureBareBullmq({ ...bareDrain, groupSize: FLOOR_GROUP_SIZE })) };
      // Raw's CPU an item again, just before the timed drains: the bookkeeping goals' yardstick is the lower of the two
      // runs, so a slow moment of one raw run never flatters them (this box's speed drifts by a fifth within minutes).
      const rawCpuRuns = [raw.costs.cpuUsPerJob.worker, (await runRawOnnx(rawOptions)).costs.cpuUsPerJob.worker];
      const rawCpuUsPerItem = rawCpuRuns.some((us) => us === null) ? null : Math.min(...(rawCpuRuns as number[]));
      // The same drain with the session stood in for by the timed device: the bookkeeping alone, against a fast device.
      const timed = await timedDeviceDrains(stack, {
        model: 'cnn',
        jobs: drainJobs,
        warmupJobs,
        rounds: ctx.size(3, 1),
        body: bodies.json,
        workerEnv: { ...workerEnv, WORKER_DEVICE: 'cpu' },
        device: deviceTimeFromEnv(),
        rawCpuUsPerItem,
        feederSweep: feederSweep(ctx.device),
        bullmqFloor,
        bullmqGroupedFloor,
      });
      // The realistic model beside the toy, on the same stack once the CNN's workers are gone.
      const resnet = await measureResnet(ctx, stack);
      const drain = drains[0]!.run;
      const drainRatio = drain.itemsPerS / rawItemsPerS;
      const toRaw = (itemsPerS: number[]) => itemsPerS.map((v) => v / rawItemsPerS);
      const sweep = drains.slice(1);
      const json = summariseBursts(runs.json, jobs, rawItemsPerS);
      const binary = summariseBursts(runs.binary, jobs, rawItemsPerS);
      return {
        id: '1',
        title: this.title,
        metrics: {
          device: ctx.device,
          worker_provider: provider,
          jobs,
          rounds,
          raw_onnx_items_per_s: round(rawItemsPerS, 0),
          e2e_items_per_s: round(json.itemsPerS, 0),
          e2e_to_raw_ratio: round(json.ratio, 3),
          avg_batch_size: round(json.batch, 1),
          span_s: round(json.span, 2),
          submit_jobs_per_s: round(json.submitPerS, 0),
          api_cpu_ms_per_mib: cpuFigure(json.cpuMsPerMiB),
          api_cpu_ms_per_job: cpuFigure(json.cpuMsPerJob, 3),
          e2e_items_per_s_rounds: json.rounds,
          binary_e2e_items_per_s: round(binary.itemsPerS, 0),
          binary_e2e_to_raw_ratio: round(binary.ratio, 3),
          binary_avg_batch_size: round(binary.batch, 1),
          binary_span_s: round(binary.span, 2),
          binary_submit_jobs_per_s: round(binary.submitPerS, 0),
          binary_api_cpu_ms_per_mib: cpuFigure(binary.cpuMsPerMiB),
          binary_api_cpu_ms_per_job: cpuFigure(binary.cpuMsPerJob, 3),
          binary_e2e_items_per_s_rounds: binary.rounds,
          worker_side_jobs: drainJobs,
          worker_side_warmup_jobs: warmupJobs,
          worker_side_items_per_s: round(drain.itemsPerS, 0),
          worker_side_items_per_s_rounds: drainRounds.map((r) => Math.round(r.itemsPerS)).join(' / '),
          worker_side_to_raw_ratio: round(drainRatio, 3),
          worker_side_avg_batch_size: round(drain.avgBatchSize, 1),
          worker_side_main_thread_us_per_job: round(drain.costs.cpuUsPerJob['worker main'], 1),
          worker_side_session_thread_us_per_job: round(drain.costs.cpuUsPerJob['worker session'], 1),
          raw_onnx_cpu_us_per_item: round(raw.costs.cpuUsPerJob.worker, 1),
          raw_onnx_cpu_us_per_item_runs: rawCpuRuns.map((us) => round(us, 1)).join(' / '),
          failed_jobs: json.failed + binary.failed + drain.failed,
          ...gpuMetrics('raw_gpu', rawGpu),
          ...gpuMetrics('e2e_gpu', gpu),
          ...gpuMetrics('worker_side_gpu', drain.gpu),
          worker_side_batches_in_flight: drains[0]!.inFlight,
          ...Object.fromEntries(
            sweep.flatMap(({ inFlight, run }) => [
              [`worker_side_items_per_s_in_flight_${inFlight}`, round(run.itemsPerS, 0)],
              [`worker_side_to_raw_ratio_in_flight_${inFlight}`, round(run.itemsPerS / rawItemsPerS, 3)],
              ...Object.entries(gpuMetrics(`worker_side_gpu_in_flight_${inFlight}`, run.gpu)),
            ]),
          ),
          ...timed.metrics,
          ...resnet.metrics,
        },
        goals: [
          goalOverRuns('e2e ÷ raw onnxruntime, max batch 32 (JSON body)', toRaw(runs.json.map((b) => b.jobsPerS)), '>=', 0.9),
          goalOverRuns('e2e ÷ raw onnxruntime, max batch 32 (binary body)', toRaw(runs.binary.map((b) => b.jobsPerS)), '>=', 0.5),
          goalOverRuns('worker side ÷ raw onnxruntime, max batch 32 (jobs queued first)', toRaw(drainRounds.map((r) => r.itemsPerS)), '>=', 0.9),
          ...timed.goals,
        ],
        costs: [
          { name: 'e2e (JSON)', costs: json.costs, measuredJobsPerS: round(json.itemsPerS, 0) },
          { name: 'e2e (binary)', costs: binary.costs, measuredJobsPerS: round(binary.itemsPerS, 0) },
          { name: 'worker side', costs: drain.costs, measuredJobsPerS: round(drain.itemsPerS, 0) },
          ...sweep.map(({ inFlight, run }) => ({
            name: `worker side, ${inFlight} batches in flight`,
            costs: run.costs,
            measuredJobsPerS: round(run.itemsPerS, 0),
          })),
          ...timed.costs,
          { name: 'raw onnxruntime', costs: raw.costs, measuredJobsPerS: round(rawItemsPerS, 0), ceiling: true },
        ],
        table: { columns: BODY_TABLE_COLUMNS, rows: [bodyTableRow('cnn', 'json', json), bodyTableRow('cnn', 'binary', binary), ...resnet.rows] },
        notes: [
          `Saturating load: ${jobs} one-image jobs submitted with ${CONCURRENCY} requests in flight; e2e is first created_at to last finished_at. ` +
            `${rounds} rounds per body form, the forms alternating; figures are the median round.`,
          'Body forms: json sends the image as base64 `data`; binary sends the framed body (application/octet-stream, ' +
            'Inference-Header-Content-Length: the JSON submit header, then the raw FP32 bytes).',
          'API CPU: user + system time of the API process (/proc/<pid>/stat) while the jobs were submitted, per MiB of request bodies.',
          `Raw: one onnxruntime-node session in the bench process running batch ${MAX_BATCH_SIZE} back to back; ` +
            `both sides use intraOpNumThreads ${INTRA_OP_THREADS} on device ${ctx.device} (\`--device\`).`,
          "GPU utilisation: nvidia-smi's utilization.gpu (the share of time a kernel ran) and memory, sampled every 250 ms during the raw run, " +
            'the e2e bursts and the worker-side drain (absent on the CPU).',
          `Worker side: one worker (same settings) first drains ${warmupJobs} jobs unmeasured (its code compiled and its heap ` +
            "grown, as a worker's that has run a while; performance.md gives a cold worker's figures), then waits while " +
            `${drainJobs} jobs are submitted to the paused queue, which then resumes; items/s from the first claim ` +
            '(started_at) to the last finished_at. ' +
            "Its worker main thread's CPU per job is the worker's own work beyond session.run (claim, inputs, results, acknowledgement). " +
            `It runs ${rounds} times with ${drains[0]!.inFlight} batches in flight (WORKER_BATCHES_IN_FLIGHT), a fresh worker each time; ` +
            'its figures are the median drain’s, its goal the median with the range (worker_side_items_per_s_rounds)' +
            (sweep.length ? `, then again with ${sweep.map((d) => d.inFlight).join(', ')} (the *_in_flight_N figures; BENCH_BATCHES_IN_FLIGHT).` : '.'),
          "Tier costs: the median round's for each body form; the raw ceiling's is the bench process's CPU per item, as the worker tier.",
          `Workers run from ${
            workerEntries().from === 'bundle' ? 'the bundle the images run (scripts/build-server.mjs bench-worker)' : 'their TypeScript sources (tsx)'
          } on ${runtimeText(ctx.workerRuntime)}; ` +
            'the API from its sources, which cost a submit what its bundle does (docs/performance.md). BENCH_WORKER_FROM=sources runs the workers from theirs.',
          `Carried inputs: the API's QUEUE_CARRIED_INPUTS_MB is ${carriedMb}, so every CNN job of a ` +
            `${drainJobs}-job backlog carries its input in Redis beside its queue entry and no claim reads it from Postgres ` +
            '(the shipped default, 64 MiB a model, carries about 5,000 waiting CNN jobs).',
          ...timed.notes,
          ...resnet.notes,
        ],
      };
    } finally {
      await stack.close();
    }
  },
};

/** Mean and max utilisation and peak memory of one phase, under `prefix`; none on the CPU. */
function gpuMetrics(prefix: string, gpu: GpuUtilisation | null): Record<string, number> {
  if (!gpu) return {};
  return {
    [`${prefix}_utilization_mean_percent`]: gpu.meanPercent,
    [`${prefix}_utilization_max_percent`]: gpu.maxPercent,
    [`${prefix}_memory_max_mib`]: gpu.memoryMaxMiB,
  };
}

/** What the workers ran on, for the report's notes. */
function runtimeText(runtime: BenchContext['workerRuntime']): string {
  if (!runtime) return `the bench's Node, ${process.version}, with no flags`;
  const flags = runtime.nodeArgs.join(' ') || 'no flags';
  return `Node ${runtime.version} (the images' unless BENCH_WORKER_NODE says otherwise) with ${flags}, as the launcher starts them`;
}
