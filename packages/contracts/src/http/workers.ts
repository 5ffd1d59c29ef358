import { Type, type Static } from '@sinclair/typebox';

const DateTime = Type.String({ format: 'date-time' });

export const LoadedModelSchema = Type.Object({
  model: Type.String(),
  version: Type.Integer(),
  /** The execution provider the session ended on after any fallback. */
  provider: Type.String(),
  loadedAt: DateTime,
});

export const GpuStatusSchema = Type.Object({
  name: Type.String(),
  utilizationPercent: Type.Number(),
  memoryUsedMiB: Type.Number(),
  memoryTotalMiB: Type.Number(),
});

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
    currentBatch: Type.Union([Type.Object({ model: Type.String(), size: Type.Integer(), startedAt: DateTime }), Type.Null()]),
    jobsSucceeded: Type.Integer(),
    jobsFailed: Type.Integer(),
    batches: Type.Integer(),
    gpu: Type.Union([GpuStatusSchema, Type.Null()], { description: 'Null when the worker cannot read GPU figures' }),
  },
  { $id: 'Worker' },
);
export type WorkerStatus = Static<typeof WorkerSchema>;

export const WorkerListSchema = Type.Object({ items: Type.Array(WorkerSchema) });
