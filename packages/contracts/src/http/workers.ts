import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../string-enum.ts';

const DateTime = Type.String({ format: 'date-time' });

/** A GPU worker serving the demo mlp, mid-batch. */
const exampleWorker = {
  workerId: 'gpu-node-1-cuda0-4242',
  hostname: 'gpu-node-1',
  device: 'cuda:0',
  pid: 4242,
  startedAt: '2025-06-02T08:00:00.000Z',
  lastHeartbeatAt: '2025-06-02T09:30:58.000Z',
  modelsServed: ['mlp'],
  modelsLoaded: [{ model: 'mlp', version: 2, provider: 'cuda', loadedAt: '2025-06-02T08:00:03.000Z', lastUsedAt: '2025-06-02T09:30:58.000Z' }],
  modelEvents: [
    { model: 'mlp', version: 2, event: 'loaded', at: '2025-06-02T08:00:03.000Z', ms: 2480 },
    { model: 'mlp', version: 2, event: 'warmed', at: '2025-06-02T08:00:03.200Z', ms: 190 },
  ],
  currentBatch: { model: 'mlp', size: 8, startedAt: '2025-06-02T09:30:58.100Z' },
  jobsSucceeded: 91250,
  jobsFailed: 3,
  batches: 12010,
  gpu: { name: 'NVIDIA H100 80GB HBM3', utilizationPercent: 37, memoryUsedMiB: 2210, memoryTotalMiB: 81559 },
  adaptiveBatching: [
    {
      model: 'mlp',
      latencyTargetMs: 50,
      maxBatchSize: 64,
      maxBatchDelayMs: 4.2,
      itemsPerS: 41290,
      reason: 'best throughput within 5%',
      curve: [
        { items: 1, inferMs: 0.21, deviationMs: 0.02, samples: 412 },
        { items: 16, inferMs: 0.62, deviationMs: 0.05, samples: 903 },
        { items: 64, inferMs: 1.55, deviationMs: 0.11, samples: 10560 },
      ],
    },
  ],
};

export const LoadedModelSchema = Type.Object({
  model: Type.String(),
  version: Type.Integer(),
  /** The execution provider the session ended on after any fallback. */
  provider: Type.String(),
  loadedAt: DateTime,
  /** When a batch last ran on it (or it loaded, if none has); absent from older workers. */
  lastUsedAt: Type.Optional(DateTime),
});

export const MODEL_EVENT_KINDS = ['loaded', 'warmed', 'unloaded'] as const;
export const MODEL_UNLOAD_REASONS = ['idle', 'memory', 'thread-failed', 'retired'] as const;

/** A model load, warm-up or unload on a worker. */
export const ModelEventSchema = Type.Object({
  model: Type.String(),
  version: Type.Integer(),
  event: StringEnum(MODEL_EVENT_KINDS),
  /** Why it was unloaded: no batch for the idle time, room for another model, its session thread died, or the version is retired and has no job left. */
  reason: Type.Optional(StringEnum(MODEL_UNLOAD_REASONS)),
  at: DateTime,
  /** How long the load (download, check, session start) or the warm-up run took. */
  ms: Type.Optional(Type.Number()),
});
export type ModelEvent = Static<typeof ModelEventSchema>;

/** One batch size as a worker measured it on its device. */
export const ProfilePointSchema = Type.Object({
  items: Type.Integer({ description: 'Rows in the batch' }),
  inferMs: Type.Number({ description: 'Running mean of its inference time' }),
  deviationMs: Type.Number({ description: 'Running mean absolute deviation' }),
  samples: Type.Integer(),
});

/** A model the worker batches adaptively (`batching: "auto"`): what it measured and what it chose. */
export const AdaptiveBatchingSchema = Type.Object({
  model: Type.String(),
  latencyTargetMs: Type.Integer(),
  maxBatchSize: Type.Integer({ description: 'Chosen now' }),
  maxBatchDelayMs: Type.Number({ description: 'Chosen now' }),
  itemsPerS: Type.Union([Type.Number(), Type.Null()], { description: 'Expected throughput at the chosen size; null before any run' }),
  reason: Type.String(),
  curve: Type.Array(ProfilePointSchema, { description: 'Inference time per batch size measured so far' }),
});
export type AdaptiveBatching = Static<typeof AdaptiveBatchingSchema>;

export const GpuStatusSchema = Type.Object({
  name: Type.String(),
  utilizationPercent: Type.Number(),
  memoryUsedMiB: Type.Number(),
  memoryTotalMiB: Type.Number(),
});

/** A model a worker stopped taking after a fault of its own; it retries the load with backoff and resumes by itself. */
export const WorkerFaultSchema = Type.Object({
  model: Type.String(),
  version: Type.Integer(),
  code: Type.String({ description: 'What the load failed with, e.g. MODEL_LOAD_FAILED, STORAGE_UNAVAILABLE' }),
  message: Type.String({ description: 'The last load error' }),
  since: DateTime,
  retryAt: DateTime,
});
export type WorkerFault = Static<typeof WorkerFaultSchema>;

/** What a worker process reports in its heartbeat (Redis, with a TTL of a few beats). */
export const WorkerSchema = Type.Object(
  {
    workerId: Type.String(),
    hostname: Type.String(),
    device: Type.String({ description: '`cpu`, `cuda:N` or `webgpu:N`' }),
    pid: Type.Integer(),
    startedAt: DateTime,
    lastHeartbeatAt: DateTime,
    modelsServed: Type.Array(Type.String(), { description: 'Models whose queues it consumes' }),
    modelsLoaded: Type.Array(LoadedModelSchema),
    /** The worker's last model loads, warm-ups and unloads, oldest first (at most 20); absent from older workers. */
    modelEvents: Type.Optional(Type.Array(ModelEventSchema, { maxItems: 20 })),
    currentBatch: Type.Union([Type.Object({ model: Type.String(), size: Type.Integer(), startedAt: DateTime }), Type.Null()]),
    jobsSucceeded: Type.Integer(),
    jobsFailed: Type.Integer(),
    batches: Type.Integer(),
    gpu: Type.Union([GpuStatusSchema, Type.Null()], { description: 'Null when the worker cannot read GPU figures' }),
    ready: Type.Optional(
      Type.Boolean({ description: 'False while it does not take some model after a fault of its own (see faults); absent from older workers' }),
    ),
    faults: Type.Optional(
      Type.Array(WorkerFaultSchema, {
        description:
          'Models it stopped taking after a fault of its own (download, credentials, disk, a model that would not load there); ' +
          'their jobs go to other workers, unspent',
      }),
    ),
    adaptiveBatching: Type.Optional(
      Type.Array(AdaptiveBatchingSchema, {
        description: 'Models it batches with `batching: "auto"`: the measured curve and the size and delay chosen from it',
      }),
    ),
  },
  { $id: 'Worker', examples: [exampleWorker] },
);
export type WorkerStatus = Static<typeof WorkerSchema>;

export const WorkerListSchema = Type.Object({ items: Type.Array(WorkerSchema) }, { examples: [{ items: [exampleWorker] }] });
