import { DEFAULT_LATENCY_TARGET_MS, type AdaptiveBatching } from '@inferq/contracts';
import { createPeriodicTask, type Logger } from '@inferq/core';
import { createPoolFromConfig, listLatestModels, type Pool } from '@inferq/db';
import { createCarriedInputs, createRedisConnection, isRedisOutageError, watchRedisOutages, type RedisClient } from '@inferq/queue';
import { createStorageFromConfig, createTensorStore, type Storage } from '@inferq/storage';
import type { WorkerConfig } from '../config.ts';
import { createBatchStore } from '../pipeline/batch-store.ts';
import {
  createInferenceBatchRunner,
  type RunnerHealth,
  type RunnerMetrics,
  type RunnerSessions,
  type RunnerStatus,
} from '../pipeline/inference-batch-runner.ts';
import { createInferenceProfiles } from '../pipeline/inference-profiles.ts';
import { createModelConsumer, type ModelConsumer } from '../pipeline/model-consumer.ts';
import type { WorkerMetrics } from '../telemetry/worker-metrics.ts';
import type { WorkerStatusTracker } from '../telemetry/worker-status.ts';

type FeederSessions = RunnerSessions;
type FeederHealth = RunnerHealth;
type FeederStatus = RunnerStatus & Pick<WorkerStatusTracker, 'adaptiveBatching' | 'setModelsServed'>;
type FeederMetrics = RunnerMetrics & Pick<WorkerMetrics, 'modelFaulted'>;

/**
 * What a feeder needs of the device's host, which holds one of each per worker process: in process, the objects
 * themselves; in a feeder thread, proxies over its port (host-proxy.ts).
 */
export interface FeederHost {
  sessions: FeederSessions;
  health: FeederHealth;
  status: FeederStatus;
  metrics: FeederMetrics;
}

/** What a feeder reads and writes through: in process, the ones main's duties use too; in a thread, its own (openFeederConnections). */
export interface FeederConnections {
  pool: Pool;
  /** The model consumers' connection (each BullMQ worker adds its blocking one). */
  consumerRedis: RedisClient;
  storage: Storage;
}

export interface FeederOptions {
  config: WorkerConfig;
  /** Bound to the worker (and in a thread to the feeder). */
  logger: Logger;
  workerId: string;
  host: FeederHost;
  connections: FeederConnections;
  /** Run at the end of every model refresh: in process, the retired-version unload, which shares the pass as before feeder threads. */
  afterRefresh?: () => Promise<void>;
}

export interface Feeder {
  /** Stops and restarts taking a model's jobs (the host's model health, after a fault of this worker's). */
  pause(model: string): Promise<void>;
  resume(model: string): Promise<void>;
  /** The models whose queues it consumes. */
  models(): string[];
  /** Graceful: stops taking jobs, finishes and stores the batches in hand; the connections are left to their owner. */
  close(): Promise<void>;
}

/**
 * The per-job path of a worker process: one queue consumer per served model (found by its own model refresh), the
 * batcher, and the batch runner (claim, inputs, one session run on the host, result writes, acknowledgements). Runs
 * in process when WORKER_FEEDERS is 1, else once in each feeder thread; resolves once its first refresh is done.
 */
export async function startFeeder(o: FeederOptions): Promise<Feeder> {
  const { config, logger, host } = o;
  const { pool, consumerRedis, storage } = o.connections;
  const profiles = createInferenceProfiles();
  const workers = new Map<string, ModelConsumer>();
  // Ends the batches' waits on a Postgres or S3 outage when the worker stops: their jobs go back to the queue.
  const stopping = new AbortController();
  const tensors = createTensorStore({ storage, inlineMaxBytes: config.INLINE_TENSOR_MAX_BYTES, inlineForm: config.INLINE_TENSOR_FORM });
  const runner = createInferenceBatchRunner({
    store: createBatchStore({ pool, storage, tensors, workerId: o.workerId }),
    sessions: host.sessions,
    health: host.health,
    status: host.status,
    metrics: host.metrics,
    tensors,
    workerId: o.workerId,
    device: config.WORKER_DEVICE,
    profiles,
    deadlines: config.DEADLINE_SCHEDULING,
    logger,
    signal: stopping.signal,
    runningMarkMs: config.WORKER_RUNNING_MARK_MS,
    carried: createCarriedInputs(consumerRedis, config.QUEUE_PREFIX),
  });

  const served = config.WORKER_MODELS === '*' ? undefined : new Set(config.WORKER_MODELS.split(',').map((m) => m.trim()));
  async function refreshModels(): Promise<void> {
    for (const m of await listLatestModels(pool)) {
      if (workers.has(m.name) || (served && !served.has(m.name))) continue;
      // A series of 0 from every worker that serves the model: without it, one faulted worker among healthy ones
      // would be the only series, and InferqModelNoReadyWorker (min by model) would fire.
      host.metrics.modelFaulted(m.name, false);
      const consumer = createModelConsumer({
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
                report: (state: AdaptiveBatching) => host.status.adaptiveBatching(state),
              },
            }
          : {}),
        maxBatchSize: m.batching.maxBatchSize,
        maxBatchDelayMs: m.batching.maxBatchDelayMs,
        lockDurationMs: config.WORKER_LOCK_DURATION_MS,
        stalledIntervalMs: config.WORKER_STALLED_INTERVAL_MS,
        batchesInFlight: config.WORKER_BATCHES_IN_FLIGHT,
        feeders: config.WORKER_FEEDERS,
      });
      workers.set(m.name, consumer);
      // A feeder thread may learn of a fault (another feeder's) before its own refresh finds the model: born paused.
      if (host.health.isFaulted(m.name)) await consumer.pause();
      host.status.setModelsServed([...workers.keys()]);
      logger.info({ model: m.name, ...m.batching }, 'serving model');
    }
    await o.afterRefresh?.();
  }
  const refresh = createPeriodicTask({
    what: 'model refresh',
    intervalMs: config.MODEL_REFRESH_INTERVAL_MS,
    logger,
    run: refreshModels,
    expected: isRedisOutageError,
  });
  await refreshModels();
  refresh.start();

  return {
    pause: async (model) => workers.get(model)?.pause(),
    resume: async (model) => workers.get(model)?.resume(),
    models: () => [...workers.keys()],
    async close(): Promise<void> {
      stopping.abort();
      // No refresh starts again; one in progress ends while the batches drain.
      const refreshStopped = refresh.stop();
      await Promise.all([...workers.values()].map((w) => w.close()));
      await refreshStopped;
    },
  };
}

/** A feeder thread's own connections: a Postgres pool (DATABASE_POOL_MAX), a Redis consumer connection and an S3 client. */
export function openFeederConnections(config: WorkerConfig, logger: Logger): FeederConnections & { close(): Promise<void> } {
  const pool = createPoolFromConfig(config, 'inferq-worker', logger);
  const consumerRedis = createRedisConnection(config.REDIS_URL, 'consumer');
  // Its outages logged as the main thread's are (the process's metrics follow the main thread's connections).
  watchRedisOutages(consumerRedis, { connection: 'consumer', logger });
  const storage = createStorageFromConfig(config);
  return {
    pool,
    consumerRedis,
    storage,
    async close(): Promise<void> {
      await consumerRedis.quit().catch(() => {});
      await pool.end();
    },
  };
}
