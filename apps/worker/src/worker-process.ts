import { hostname } from 'node:os';
import type { Static, TObject } from '@sinclair/typebox';
import { DEFAULT_LATENCY_TARGET_MS, type AdaptiveBatching } from '@inferq/contracts';
import { createPeriodicTask, type Logger, type PeriodicTask } from '@inferq/core';
import { createPool, findIdleRetiredVersions, listLatestModels } from '@inferq/db';
import { createJobProducer, createRedisConnection, publishWorkerStatus, readMaxmemoryPolicy, removeWorkerStatus } from '@inferq/queue';
import { createStorage, createTensorStore } from '@inferq/storage';
import { createBatchRunner } from './pipeline/batch-runner.ts';
import type { workerConfig } from './config.ts';
import { createGpuProbe } from './telemetry/gpu-probe.ts';
import { createInferenceProfiles } from './pipeline/inference-profiles.ts';
import { createModelCache } from './sessions/model-cache.ts';
import { createModelHealth } from './sessions/model-health.ts';
import { parsePreloadList, preloadModels } from './sessions/model-preload.ts';
import { createModelSessions, type ModelSessionsDeps } from './sessions/model-sessions.ts';
import { createModelConsumer, type ModelConsumer } from './pipeline/model-consumer.ts';
import { createPriorityAger } from './duties/priority-aging.ts';
import { createReconciler } from './duties/reconciler.ts';
import { createResultWriter } from './pipeline/result-writer.ts';
import { createWorkerMetrics } from './telemetry/worker-metrics.ts';
import { createWorkerStatus } from './telemetry/worker-status.ts';

export type WorkerConfig = Readonly<Static<TObject<typeof workerConfig>>>;

/** What a caller other than main.ts may swap: the bench's timed device opens its stand-in sessions here. */
export interface WorkerSeams {
  openSession?: ModelSessionsDeps['openSession'];
}

/** Everything one worker process (one device) runs; main.ts only loads config and wires shutdown. */
export async function startWorkerProcess(config: WorkerConfig, baseLogger: Logger, seams: WorkerSeams = {}) {
  const workerId = `${hostname()}-${config.WORKER_DEVICE.replace(':', '')}-${process.pid}`;
  const logger = baseLogger.child({ workerId, device: config.WORKER_DEVICE });
  const pool = createPool({ url: config.DATABASE_URL, schema: config.DATABASE_SCHEMA, max: config.DATABASE_POOL_MAX, applicationName: 'inferq-worker' });
  const consumerRedis = createRedisConnection(config.REDIS_URL, 'consumer');
  const producerRedis = createRedisConnection(config.REDIS_URL, 'producer');
  for (const r of [consumerRedis, producerRedis]) r.on('error', (err) => logger.warn({ err: err.message }, 'redis connection error'));
  const producer = createJobProducer({
    connection: producerRedis,
    prefix: config.QUEUE_PREFIX,
    retry: { attempts: config.JOB_ATTEMPTS, backoffMs: config.RETRY_BACKOFF_MS },
  });
  const storage = createStorage({
    endpoint: config.S3_ENDPOINT,
    region: config.S3_REGION,
    bucket: config.S3_BUCKET,
    accessKeyId: config.S3_ACCESS_KEY_ID,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY,
    forcePathStyle: config.S3_FORCE_PATH_STYLE,
  });
  const readGpu = createGpuProbe(config.WORKER_DEVICE);
  const metrics = createWorkerMetrics({ device: config.WORKER_DEVICE, readGpu });
  const status = createWorkerStatus({ workerId, device: config.WORKER_DEVICE });
  const sessions = createModelSessions({
    pool,
    logger,
    metrics,
    cache: createModelCache({ storage, dir: config.MODEL_CACHE_DIR }),
    settings: {
      device: config.WORKER_DEVICE,
      providers: config.EXECUTION_PROVIDERS?.split(','),
      intraOpNumThreads: config.INTRA_OP_THREADS,
      interOpNumThreads: config.INTER_OP_THREADS,
      providerPairing: config.CUDA_PROVIDER_PAIRING,
    },
    lifecycle: { warmup: config.MODEL_WARMUP, idleUnloadMs: config.MODEL_IDLE_UNLOAD_S * 1000, memoryBudgetBytes: config.MODEL_MEMORY_BUDGET_MB * 2 ** 20 },
    onEvent: (event) => status.modelEvent(event),
    openSession: seams.openSession,
  });
  const profiles = createInferenceProfiles();
  const workers = new Map<string, ModelConsumer>();
  const health = createModelHealth({
    logger,
    pause: async (model) => workers.get(model)?.pause(),
    resume: async (model) => workers.get(model)?.resume(),
    probe: (model, version) => sessions.ensureLoaded(model, version),
    onChange: (model, faulted) => {
      metrics.modelFaulted(model, faulted);
      void beat();
    },
  });
  // Ends the batches' waits on a Postgres or S3 outage when the worker stops: their jobs go back to the queue.
  const stopping = new AbortController();
  const tensors = createTensorStore({ storage, inlineMaxBytes: config.INLINE_TENSOR_MAX_BYTES, inlineForm: config.INLINE_TENSOR_FORM });
  const runner = createBatchRunner({
    pool,
    sessions,
    tensors,
    workerId,
    device: config.WORKER_DEVICE,
    profiles,
    deadlines: config.DEADLINE_SCHEDULING,
    logger,
    status,
    metrics,
    signal: stopping.signal,
    health,
    writer: createResultWriter({ pool, storage, tensors, workerId }),
    runningMarkMs: config.WORKER_RUNNING_MARK_MS,
  });
  const reconciler = createReconciler({ pool, producer, redis: producerRedis, minAgeMs: config.RECONCILE_MIN_AGE_MS, logger });
  // A pass every quarter step, by one worker of all (the lease): a job moves up at most a quarter step late.
  const agingPassMs = config.PRIORITY_AGING_S * 250;
  const ager = createPriorityAger({ pool, producer, connection: producerRedis, agingMs: config.PRIORITY_AGING_S * 1000, passLeaseMs: agingPassMs, logger });

  const policy = await readMaxmemoryPolicy(producerRedis).catch(() => undefined);
  if (policy !== undefined && policy !== 'noeviction') logger.warn({ policy }, 'redis maxmemory-policy is not noeviction; queue data may be evicted');

  const served = config.WORKER_MODELS === '*' ? undefined : new Set(config.WORKER_MODELS.split(',').map((m) => m.trim()));
  async function refreshModels(): Promise<void> {
    for (const m of await listLatestModels(pool)) {
      if (workers.has(m.name) || (served && !served.has(m.name))) continue;
      // A series of 0 from every worker that serves the model: without it, one faulted worker among healthy ones
      // would be the only series, and InferqModelNoReadyWorker (min by model) would fire.
      metrics.modelFaulted(m.name, false);
      workers.set(
        m.name,
        createModelConsumer({
          model: m.name,
          connection: consumerRedis,
          prefix: config.QUEUE_PREFIX,
          runner,
          logger,
          profile: profiles.of(m.name),
          deadlines: config.DEADLINE_SCHEDULING,
          ...(m.batching.mode === 'auto'
            ? {
                adaptive: {
                  latencyTargetMs: m.batching.latencyTargetMs ?? DEFAULT_LATENCY_TARGET_MS,
                  report: (state: AdaptiveBatching) => status.adaptiveBatching(state),
                },
              }
            : {}),
          maxBatchSize: m.batching.maxBatchSize,
          maxBatchDelayMs: m.batching.maxBatchDelayMs,
          lockDurationMs: config.WORKER_LOCK_DURATION_MS,
          stalledIntervalMs: config.WORKER_STALLED_INTERVAL_MS,
          batchesInFlight: config.WORKER_BATCHES_IN_FLIGHT,
        }),
      );
      status.setModelsServed([...workers.keys()]);
      logger.info({ model: m.name, ...m.batching }, 'serving model');
    }
    // A retired version runs only the jobs queued before its retirement: once none is left, its session goes.
    await sessions.unloadVersions(await findIdleRetiredVersions(pool, sessions.loaded()), 'retired');
  }
  const heartbeat = async () =>
    publishWorkerStatus(
      producerRedis,
      config.QUEUE_PREFIX,
      status.snapshot(sessions.loaded(), await readGpu(), health.faults()),
      config.HEARTBEAT_INTERVAL_MS * 3,
    );

  const metricsServer = await metrics.serve(config.METRICS_HOST, config.METRICS_PORT, logger, health.faults);
  const beat = () => heartbeat().catch((err) => logger.warn({ err: (err as Error).message }, 'heartbeat failed'));
  const duty = (what: string, intervalMs: number, run: () => Promise<unknown>): PeriodicTask => createPeriodicTask({ what, intervalMs, logger, run });
  const heartbeats = duty('heartbeat', config.HEARTBEAT_INTERVAL_MS, heartbeat);
  const passes = [
    duty('model refresh', config.MODEL_REFRESH_INTERVAL_MS, refreshModels),
    duty('reconcile', config.RECONCILE_INTERVAL_MS, () => reconciler.reconcileOnce()),
    ...(config.PRIORITY_AGING_S > 0 ? [duty('priority aging', agingPassMs, () => ager.run())] : []),
    // A quarter of the idle time between sweeps: a model outlives its idle time by at most that much.
    ...(config.MODEL_IDLE_UNLOAD_S > 0 ? [duty('idle model unload', Math.min(config.MODEL_IDLE_UNLOAD_S * 250, 30_000), () => sessions.unloadIdle())] : []),
  ];
  const preload = parsePreloadList(config.WORKER_PRELOAD_MODELS);
  if (preload.length > 0) {
    // Beating while it preloads: the loads show in GET /v1/workers, though it consumes no queue yet.
    await beat();
    heartbeats.start();
    await preloadModels(sessions, preload, logger);
  }
  await refreshModels();
  await beat();
  if (preload.length === 0) heartbeats.start();
  for (const pass of passes) pass.start();
  logger.info({ models: [...workers.keys()] }, 'worker started');

  return {
    workerId,
    /** Graceful: stop taking jobs, finish and store the batches in hand, then close connections. */
    async close(): Promise<void> {
      stopping.abort();
      health.close();
      // No duty starts again; one in progress ends while the batches drain, before the connections close.
      const dutiesStopped = Promise.all([heartbeats, ...passes].map((d) => d.stop()));
      await Promise.all([...workers.values()].map((w) => w.close()));
      await dutiesStopped;
      await sessions.closeAll();
      await metricsServer.close();
      await removeWorkerStatus(producerRedis, config.QUEUE_PREFIX, workerId).catch(() => {});
      await producer.close();
      await Promise.all([consumerRedis.quit(), producerRedis.quit()]).catch(() => {});
      await pool.end();
      logger.info('worker stopped');
    },
  };
}
