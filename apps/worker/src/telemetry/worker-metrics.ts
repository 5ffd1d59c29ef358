import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Priority } from '@inferq/contracts';
import { createScrapeReads, type Logger } from '@inferq/core';
import { createPostgresOutageMetrics } from '@inferq/db';
import { createRedisOutageMetrics } from '@inferq/queue';
import type { GpuStatus } from './gpu-probe.ts';

/** What the job metrics read of a job: its labels and when it was queued. */
interface MeasuredJob {
  model: string;
  priority: Priority;
  createdAtMs: number;
}

const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * A worker process's Prometheus metrics, served on their own port: jobs
 * finished, batch sizes, inference, queue wait and end-to-end times, model
 * load and warm-up times, and the GPU's utilisation and memory where nvidia-smi answers.
 */
export function createWorkerMetrics(o: { device: string; readGpu: () => Promise<GpuStatus | null> }) {
  const registry = new Registry();
  registry.setDefaultLabels({ device: o.device });
  collectDefaultMetrics({ register: registry, prefix: 'inferq_worker_' });
  const registers = [registry];
  // Nothing else is read at scrape time (Redis and Postgres are watched, not read): nvidia-smi goes through the scrape's limit.
  const scrape = createScrapeReads(registry, { sources: ['gpu'] });

  const finished = new Counter({
    name: 'inferq_jobs_finished_total',
    help: 'Jobs whose outcome this worker stored, by model, priority and outcome',
    labelNames: ['model', 'priority', 'outcome'],
    registers,
  });
  const batchSize = new Histogram({
    name: 'inferq_batch_size',
    help: 'Jobs per batch run',
    labelNames: ['model'],
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    registers,
  });
  const inference = new Histogram({ name: 'inferq_inference_seconds', help: 'Session run time per batch', labelNames: ['model'], buckets: SECONDS, registers });
  const queueWait = new Histogram({
    name: 'inferq_queue_wait_seconds',
    help: 'Submit to batch start, per job',
    labelNames: ['model', 'priority'],
    buckets: SECONDS,
    registers,
  });
  const endToEnd = new Histogram({
    name: 'inferq_job_end_to_end_seconds',
    help: 'Submit to result stored, per job',
    labelNames: ['model', 'priority'],
    buckets: SECONDS,
    registers,
  });
  const modelLoad = new Histogram({
    name: 'inferq_model_load_seconds',
    help: 'Model download, check and session start',
    labelNames: ['model'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers,
  });
  const modelWarmup = new Histogram({
    name: 'inferq_model_warmup_seconds',
    help: 'Warm-up run on zero-filled inputs after a model loads',
    labelNames: ['model'],
    buckets: SECONDS,
    registers,
  });
  const released = new Counter({
    name: 'inferq_jobs_released_total',
    help: 'Jobs this worker gave back to the queue, unspent, for a fault of its own (download, credentials, disk, a model that would not load here)',
    labelNames: ['model'],
    registers,
  });
  const recordLost = new Counter({
    name: 'inferq_jobs_record_lost_total',
    help:
      'Queue entries this worker dropped because their job row is gone: accepted jobs the record lost ' +
      '(a failover to an asynchronous standby dropped its last commits); polls of them answer 410 JOB_LOST',
    labelNames: ['model'],
    registers,
  });
  const faulted = new Gauge({
    name: 'inferq_worker_model_faulted',
    help: '1 while this worker does not take the model after a fault of its own (it retries the load with backoff); the worker reports not ready',
    labelNames: ['model'],
    registers,
  });
  // One nvidia-smi run a scrape, shared by the three gauges.
  let gpuRead: { at: number; read: Promise<GpuStatus | null> } | undefined;
  const readGpu = () => {
    if (!gpuRead || Date.now() - gpuRead.at > 1_000) gpuRead = { at: Date.now(), read: scrape.read('gpu', o.readGpu) };
    return gpuRead.read;
  };
  const gpuGauge = (name: string, help: string, pick: (g: GpuStatus) => number) =>
    scrape.gauge({
      name,
      help,
      source: 'gpu',
      async read(values) {
        const gpu = await readGpu();
        if (gpu) values.set(pick(gpu));
      },
    });
  gpuGauge('inferq_gpu_utilization_ratio', 'GPU utilisation (0-1), from nvidia-smi', (g) => g.utilizationPercent / 100);
  gpuGauge('inferq_gpu_memory_used_bytes', 'GPU memory in use, from nvidia-smi', (g) => g.memoryUsedMiB * 2 ** 20);
  gpuGauge('inferq_gpu_memory_total_bytes', 'GPU memory in all, from nvidia-smi', (g) => g.memoryTotalMiB * 2 ** 20);

  return {
    registry,
    /** The outage callbacks of one Redis connection (watchRedisOutages). */
    redisConnection: createRedisOutageMetrics(registry),
    /** The outage and failover callbacks of the pool's watch (watchPostgresOutages). */
    postgres: createPostgresOutageMetrics(registry),
    batchStarted(jobs: readonly MeasuredJob[]): void {
      const now = Date.now();
      for (const j of jobs) queueWait.observe({ model: j.model, priority: j.priority }, (now - j.createdAtMs) / 1000);
    },
    batchRan(model: string, size: number, inferMs: number): void {
      batchSize.observe({ model }, size);
      inference.observe({ model }, inferMs / 1000);
    },
    jobsFinished(jobs: readonly MeasuredJob[], outcome: 'succeeded' | 'failed' | 'expired'): void {
      const now = Date.now();
      for (const j of jobs) {
        finished.inc({ model: j.model, priority: j.priority, outcome });
        endToEnd.observe({ model: j.model, priority: j.priority }, (now - j.createdAtMs) / 1000);
      }
    },
    jobsReleased(jobs: readonly MeasuredJob[]): void {
      for (const j of jobs) released.inc({ model: j.model });
    },
    /** Queue entries dropped because the record lost their jobs (no row at all): counted once, when their loss is recorded. */
    jobsRecordLost(model: string, count: number): void {
      if (count > 0) recordLost.inc({ model }, count);
    },
    modelFaulted(model: string, isFaulted: boolean): void {
      faulted.set({ model }, isFaulted ? 1 : 0);
    },
    modelLoaded(model: string, seconds: number): void {
      modelLoad.observe({ model }, seconds);
    },
    modelWarmed(model: string, seconds: number): void {
      modelWarmup.observe({ model }, seconds);
    },
    /**
     * Serves GET /metrics, GET /healthz for liveness probes and GET /readyz
     * (503 with the faults while the worker does not take some model after a
     * fault of its own) on host:port (port 0: any free one); resolves with the port.
     */
    async serve(host: string, port: number, logger: Logger, faults: () => unknown[] = () => []): Promise<{ port: number; close(): Promise<void> }> {
      const server = createServer((req, res) => {
        const json = (status: number, body: unknown) => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        // Answering at all shows the main thread's event loop turns (sessions run in worker threads).
        if (req.method === 'GET' && req.url === '/healthz') return json(200, { status: 'ok' });
        if (req.method === 'GET' && req.url === '/readyz') {
          const now = faults();
          return now.length === 0 ? json(200, { status: 'ok' }) : json(503, { status: 'not ready', faults: now });
        }
        if (req.method !== 'GET' || req.url !== '/metrics') return void res.writeHead(404).end();
        registry.metrics().then(
          (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
          (err: Error) => res.writeHead(500).end(err.message),
        );
      });
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
      const bound = (server.address() as AddressInfo).port;
      logger.info({ host, port: bound }, 'metrics listening');
      return { port: bound, close: () => new Promise((resolve) => server.close(() => resolve())) };
    },
  };
}
export type WorkerMetrics = ReturnType<typeof createWorkerMetrics>;
