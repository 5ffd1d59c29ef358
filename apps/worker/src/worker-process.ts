import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import pRetry from 'p-retry';
import { createPeriodicTask, type Logger, type PeriodicTask } from '@inferq/core';
import { createPoolFromConfig, findIdleRetiredVersions, watchPostgresOutages } from '@inferq/db';
import {
  createJobProducer,
  createRedisConnection,
  isRedisOutageError,
  publishWorkerStatus,
  removeWorkerStatus,
  warnOnEvictionPolicy,
  watchRedisOutages,
} from '@inferq/queue';
import { createStorageFromConfig } from '@inferq/storage';
import type { WorkerConfig } from './config.ts';
import { startFeeder, type Feeder, type FeederHost } from './feeders/feeder.ts';
import { startFeederThreads } from './feeders/feeder-threads.ts';
import { createGpuProbe } from './telemetry/gpu-probe.ts';
import { createModelCache } from './sessions/model-cache.ts';
import { createModelHealth } from './sessions/model-health.ts';
import { parsePreloadList, preloadModels } from './sessions/model-preload.ts';
import { createModelSessions, type ModelSessionsDeps } from './sessions/model-sessions.ts';
import { createPriorityAger } from './duties/priority-aging.ts';
import { createReconciler } from './duties/reconciler.ts';
import { createWorkerMetrics } from './telemetry/worker-metrics.ts';
import { createWorkerStatus } from './telemetry/worker-status.ts';

export type { WorkerConfig } from './config.ts';

/** What a caller other than main.ts may swap: the bench's timed device opens its stand-in sessions here. */
export interface WorkerSeams {
  openSession?: ModelSessionsDeps['openSession'];
}

/**
 * Everything one worker process (one device) runs; main.ts only loads config and wires shutdown. The main thread keeps
 * the device's one copy of each model (sessions, in session threads), the model health, the status and heartbeat, the
 * metrics and the periodic duties; the per-job path (feeders/feeder.ts: queue consumers, claims, result writes,
 * acknowledgements) runs here when WORKER_FEEDERS is 1, else in that many feeder threads, each on its own connections.
 */
export async function startWorkerProcess(config: WorkerConfig, baseLogger: Logger, seams: WorkerSeams = {}) {
  const workerId = `${hostname()}-${config.WORKER_DEVICE.replace(':', '')}-${process.pid}`;
  const logger = baseLogger.child({ workerId, device: config.WORKER_DEVICE });
  const inProcess = config.WORKER_FEEDERS === 1;
  const pool = createPoolFromConfig(config, 'inferq-worker', logger);
  // The queue consumers' connection: each feeder thread opens its own.
  const consumerRedis = inProcess ? createRedisConnection(config.REDIS_URL, 'consumer') : undefined;
  const producerRedis = createRedisConnection(config.REDIS_URL, 'producer');
  const producer = createJobProducer({
    connection: producerRedis,
    prefix: config.QUEUE_PREFIX,
    retry: { attempts: config.JOB_ATTEMPTS, backoffMs: config.RETRY_BACKOFF_MS },
  });
  const storage = createStorageFromConfig(config);
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
  // Set once they have started: no fault comes before a feeder has run a batch.
  let feeding: Feeders | undefined;
  const health = createModelHealth({
    logger,
    pause: async (model) => feeding?.pause(model),
    resume: async (model) => feeding?.resume(model),
    probe: (model, version) => sessions.ensureLoaded(model, version),
    onChange: (model, faulted) => {
      metrics.modelFaulted(model, faulted);
      void beat();
    },
  });
  const host: FeederHost = { sessions, health, status, metrics };
  const reconciler = createReconciler({ pool, producer, redis: producerRedis, minAgeMs: config.RECONCILE_MIN_AGE_MS, logger });
  // One warning when the primary is lost, one line when writes are accepted again (driver noise at debug); the jobs a
  // failover may have lost are checked as soon as the new primary takes writes, not at the next pass.
  if (consumerRedis) watchRedisOutages(consumerRedis, { connection: 'consumer', logger, ...metrics.redisConnection('consumer') });
  const producerMetrics = metrics.redisConnection('producer');
  watchRedisOutages(producerRedis, {
    connection: 'producer',
    logger,
    ...producerMetrics,
    onChange(up, outageMs) {
      producerMetrics.onChange?.(up, outageMs);
      if (!up || outageMs === undefined) return;
      // Tried again while the new primary settles (a Cluster's other shards may answer before the failed one's slots do).
      const since = Date.now() - outageMs;
      pRetry(() => reconciler.reconcileAfterOutage(since), { retries: 8, minTimeout: 250, maxTimeout: 2_000 }).catch((err: Error) =>
        logger.warn({ err: err.message }, 'reconciling after an outage failed; the periodic pass will find the lost jobs'),
      );
    },
  });
  // The same for the pool's Postgres primary (inferq_postgres_up, its outages and failovers).
  const postgresWatch = watchPostgresOutages(pool, { logger, ...metrics.postgres });
  postgresWatch.start();
  // A pass every quarter step, by one worker of all (the lease): a job moves up at most a quarter step late.
  const agingPassMs = config.PRIORITY_AGING_S * 250;
  const ager = createPriorityAger({ pool, producer, connection: producerRedis, agingMs: config.PRIORITY_AGING_S * 1000, passLeaseMs: agingPassMs, logger });

  await warnOnEvictionPolicy(producerRedis, logger);

  // A retired version runs only the jobs queued before its retirement: once none is left, its session goes.
  const unloadRetired = async (): Promise<void> => sessions.unloadVersions(await findIdleRetiredVersions(pool, sessions.loaded()), 'retired');
  const heartbeat = async () =>
    publishWorkerStatus(
      producerRedis,
      config.QUEUE_PREFIX,
      status.snapshot(sessions.loaded(), await readGpu(), health.faults()),
      config.HEARTBEAT_INTERVAL_MS * 3,
    );

  const metricsServer = await metrics.serve(config.METRICS_HOST, config.METRICS_PORT, logger, health.faults);
  const beat = () =>
    heartbeat().catch((err: Error) => (isRedisOutageError(err) ? logger.debug : logger.warn).call(logger, { err: err.message }, 'heartbeat failed'));
  // A duty that fails because Redis is failing over says so at debug: the outage itself is told once, by its connection.
  const duty = (what: string, intervalMs: number, run: () => Promise<unknown>): PeriodicTask =>
    createPeriodicTask({ what, intervalMs, logger, run, expected: isRedisOutageError });
  const heartbeats = duty('heartbeat', config.HEARTBEAT_INTERVAL_MS, heartbeat);
  const passes = [
    // In process, the feeder's model refresh runs it at the end of each pass; feeder threads refresh on their own.
    ...(inProcess ? [] : [duty('retired version unload', config.MODEL_REFRESH_INTERVAL_MS, unloadRetired)]),
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
  // Each feeder's first model refresh is done when it resolves: the worker consumes every served model's queue.
  const feeders: Feeders = inProcess
    ? withLoad(
        await startFeeder({ config, logger, workerId, host, connections: { pool, consumerRedis: consumerRedis!, storage }, afterRefresh: unloadRetired }),
      )
    : await startFeederThreads({ count: config.WORKER_FEEDERS, config, workerId, logger, host, onLost: failProcess });
  feeding = feeders;
  if (!inProcess) await unloadRetired();
  await beat();
  if (preload.length === 0) heartbeats.start();
  for (const pass of passes) pass.start();
  logger.info({ models: feeders.models(), ...(inProcess ? {} : { feeders: config.WORKER_FEEDERS }) }, 'worker started');

  return {
    workerId,
    /** Each feeder's event-loop utilisation (0–1) since it started (the bench reads how busy the per-job path keeps them). */
    feederLoad: (): number[] => feeders.load(),
    /** Graceful: stop taking jobs, finish and store the batches in hand (every feeder's), then close connections. */
    async close(): Promise<void> {
      health.close();
      // No duty starts again; one in progress ends while the batches drain, before the connections close.
      const dutiesStopped = Promise.all([heartbeats, ...passes].map((d) => d.stop()));
      await feeders.close();
      await dutiesStopped;
      await sessions.closeAll();
      await metricsServer.close();
      await removeWorkerStatus(producerRedis, config.QUEUE_PREFIX, workerId).catch(() => {});
      await producer.close();
      await Promise.all([consumerRedis?.quit(), producerRedis.quit()]).catch(() => {});
      await postgresWatch.stop();
      await pool.end();
      logger.info('worker stopped');
    },
  };
}

/** The per-job path, in process or in threads; `load`: each feeder's event-loop utilisation since it started. */
type Feeders = Feeder & { load(): number[] };

/** The feeder run in process: its event loop is the process's own. */
function withLoad(feeder: Feeder): Feeders {
  const atStart = performance.eventLoopUtilization();
  return { ...feeder, load: () => [performance.eventLoopUtilization(atStart).utilization] };
}

/**
 * A feeder thread lost: thrown uncaught, so main.ts's shutdown drains the other feeders and the process exits non-zero
 * (its launcher restarts it; BullMQ's stall recovery returns the jobs the lost feeder held).
 */
function failProcess(err: Error): void {
  queueMicrotask(() => {
    throw err;
  });
}
