import type { Stack } from '@inferq/test-utils';
import { laterWalPerJob, type LaterWal } from './costs/later-wal.ts';
import type { TierCosts } from './costs/tier-costs.ts';
import { emptyJobs, meterStack, submitJobs, waitForDrained, waitForLoadedModel } from './driver.ts';
import { sampleGpu, type GpuUtilisation } from './gpu-sampler.ts';

export interface DrainOptions {
  /** The model's name; its queue is paused while the jobs are submitted. */
  model: string;
  jobs: number;
  body: (i: number) => unknown;
  /** The worker's settings. */
  workerEnv: Record<string, string>;
  /** The session's intra-op threads, for the prediction. */
  sessionCores: number;
  /** Submit requests in flight. @default 64 */
  concurrency?: number;
  /** The worker's device, whose GPU is sampled during the drain. @default cpu */
  device?: string;
  /** The worker's entry in place of apps/worker's (the timed device's, timed-device/timed-worker.ts). */
  workerEntry?: string;
  /** Node flags for the worker process (`--cpu-prof`). */
  workerNodeArgs?: string[];
  /**
   * A CHECKPOINT between the submits and the drain, as in steady state (checkpoints come every few minutes, a job
   * waits less): the first change of each page after it writes the page's full image, which the drain then pays.
   * @default false
   */
  checkpointFirst?: boolean;
  /** After the drain's readings, the WAL its jobs write later (their freeze and purge, laterWalPerJob). @default false */
  laterWal?: boolean;
  /**
   * Jobs the worker drains before the measured ones, with the same body (then emptied away): its code compiled and its
   * pools grown, as in a worker that has run a while. Without them the span also holds the worker's first seconds. @default 0
   */
  warmupJobs?: number;
  /** Called once the worker is ready, just before the queue resumes: where a probe starts its own readings. */
  onStart?: () => void;
}

export interface DrainRun {
  /** Jobs per second from the first claim (started_at) to the last completion (finished_at). */
  itemsPerS: number;
  spanS: number;
  avgBatchSize: number | null;
  failed: number;
  costs: TierCosts;
  /** During the drain; null on the CPU. */
  gpu: GpuUtilisation | null;
  /** What the submits cost a job (the API, Redis and Postgres while they were sent; no worker ran). */
  submitCosts: TierCosts;
  /** The batches' inference time over the span: the share of it the device was busy (one session, one batch at a time). */
  deviceBusy: number;
  /** With `laterWal`: the WAL a job writes after its result; null when it could not be read. */
  laterWal?: LaterWal | null;
}

/**
 * The worker's side alone: `jobs` submitted while the model's queue is paused, then the queue resumed before one
 * worker (its model preloaded and warmed, as its heartbeat shows; started after the submits, or before them to drain
 * `warmupJobs` first), so the span holds only claims, batches, result writes and acknowledgements. Run on a stack with
 * no other worker for the model; the worker is stopped and the jobs table emptied afterwards.
 */
export async function drainQueued(stack: Stack, o: DrainOptions): Promise<DrainRun> {
  await setPaused(stack, o.model, true);
  const startWorker = async () => {
    // Preloaded, and waited for: the model's load and warm-up stay out of the span.
    const started = await stack.startWorker({ ...o.workerEnv, WORKER_PRELOAD_MODELS: o.model }, { entry: o.workerEntry, nodeArgs: o.workerNodeArgs });
    await waitForLoadedModel(stack, o.model, { pid: started.child.pid }).catch(async (err: unknown) => {
      await started.stop();
      throw err;
    });
    return started;
  };
  const warm = o.warmupJobs ?? 0;
  let worker = warm > 0 ? await startWorker() : undefined;
  try {
    if (worker) {
      // The worker runs its claim-to-acknowledgement path on these first (compiled and sized as it runs for hours), then waits, paused.
      await submitJobs(stack.baseUrl, warm, o.concurrency ?? 64, o.body);
      await setPaused(stack, o.model, false);
      await waitForDrained(stack.ctx.pool, `${warm} warm-up jobs to drain`);
      await setPaused(stack, o.model, true);
      await emptyJobs(stack.ctx.pool);
    }
    const submitMeter = await meterStack(stack);
    await submitJobs(stack.baseUrl, o.jobs, o.concurrency ?? 64, o.body);
    const submitCosts = await submitMeter.stop(o.jobs);
    worker ??= await startWorker();
    if (o.checkpointFirst) await stack.ctx.pool.query('CHECKPOINT');
    const meter = await meterStack(stack, { workers: [worker], sessionCores: o.sessionCores });
    const gpuSampler = sampleGpu(o.device ?? 'cpu');
    const since = new Date();
    o.onStart?.();
    await setPaused(stack, o.model, false);
    await waitForDrained(stack.ctx.pool, `${o.jobs} jobs to drain`);
    // The drain's own dead row versions (claims, completions) cleaned now, inside the measurement: the jobs' cost, not a later run's.
    await stack.ctx.pool.query('VACUUM jobs');
    const costs = await meter.stop(o.jobs);
    const gpu = await gpuSampler.stop();
    const {
      rows: [r],
    } = await stack.ctx.pool.query(
      `SELECT extract(epoch FROM max(finished_at) - min(started_at))::float AS s,
              count(*) FILTER (WHERE status = 'failed')::int AS failed,
              (count(*) FILTER (WHERE batch_size > 0) / nullif(sum(1.0 / batch_size), 0))::float AS batch
         FROM jobs`,
    );
    const {
      rows: [busy],
    } = await stack.ctx.pool.query<{ ms: number }>('SELECT coalesce(sum(infer_ms), 0)::float AS ms FROM batches WHERE started_at >= $1', [since]);
    const laterWal = o.laterWal ? await laterWalPerJob(stack.ctx.pool) : undefined;
    await emptyJobs(stack.ctx.pool);
    return {
      itemsPerS: o.jobs / r.s,
      spanS: r.s,
      avgBatchSize: r.batch,
      failed: r.failed,
      costs,
      submitCosts,
      gpu,
      deviceBusy: busy!.ms / 1000 / r.s,
      laterWal,
    };
  } finally {
    await worker?.stop();
  }
}

async function setPaused(stack: Stack, model: string, paused: boolean): Promise<void> {
  const verb = paused ? 'pause' : 'resume';
  const res = await stack.request('POST', `/v1/models/${model}/${verb}`);
  if (res.status !== 200) throw new Error(`${verb} ${model} answered ${res.status}`);
}
