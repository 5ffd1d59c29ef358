import { Type, type Static } from '@sinclair/typebox';
import { EXAMPLE_TIME } from './examples.ts';
import { FiniteInteger } from './request-values.ts';

const Nullable = <T extends ReturnType<typeof Type.Number>>(t: T) => Type.Union([t, Type.Null()]);
const Ms = Nullable(Type.Number({ description: 'Milliseconds; null when no job finished' }));

export const StatsQuerySchema = Type.Object(
  { windowMinutes: Type.Optional(FiniteInteger({ minimum: 1, maximum: 1440, default: 15 })) },
  { additionalProperties: false },
);
export type StatsQuery = Static<typeof StatsQuerySchema>;

/** Queue jobs of one model right now, waiting ones split by priority. */
export const QueueDepthSchema = Type.Object({
  model: Type.String(),
  high: Type.Integer(),
  normal: Type.Integer(),
  low: Type.Integer(),
  batch: Type.Integer({ description: 'Waiting in the batch class (the Batch API), served after every other' }),
  active: Type.Integer({ description: 'Held by a worker' }),
  delayed: Type.Integer({ description: 'Waiting out a retry backoff' }),
  workers: Type.Integer({ description: 'Live workers consuming this queue' }),
  paused: Type.Boolean({
    description: 'Paused by an operator (`POST /v1/models/{name}/pause`): jobs are still accepted and kept, none is started until resumed',
  }),
});
export type QueueDepth = Static<typeof QueueDepthSchema>;

/** A model's queue after pause or resume: its depth now and whether it is paused. */
export const ModelQueueSchema = Type.Composite([QueueDepthSchema], {
  $id: 'ModelQueue',
  examples: [{ model: 'mlp', high: 0, normal: 14, low: 3, batch: 0, active: 0, delayed: 0, workers: 1, paused: true }],
});
export type ModelQueue = Static<typeof ModelQueueSchema>;

/** A queue as the stats show it: its depth and the age of its oldest queued job. */
export const QueueStatsSchema = Type.Composite([
  QueueDepthSchema,
  Type.Object({ oldestQueuedS: Nullable(Type.Number({ description: 'Seconds the oldest queued job (any priority) has waited; null when none is queued' })) }),
]);
export type QueueStats = Static<typeof QueueStatsSchema>;

/** Queue wait and inference time percentiles over the window. */
const LatencyFields = {
  queueMsP50: Ms,
  queueMsP95: Ms,
  queueMsP99: Ms,
  inferMsP50: Ms,
  inferMsP95: Ms,
  inferMsP99: Ms,
};

/** Finished jobs of one model version, or of one worker, over the window. */
const BreakdownFields = {
  completedPerSec: Type.Number({ description: 'Jobs that succeeded, per second over the window' }),
  completed: Type.Integer(),
  failed: Type.Integer(),
  errorRate: Type.Number({ description: 'failed ÷ (completed + failed)' }),
  ...LatencyFields,
  avgBatchSize: Nullable(Type.Number()),
};
export const ModelVersionStatsSchema = Type.Object({ model: Type.String(), version: Type.Integer(), ...BreakdownFields });
export type ModelVersionStats = Static<typeof ModelVersionStatsSchema>;
export const WorkerStatsSchema = Type.Object({ workerId: Type.String(), ...BreakdownFields });
export type WorkerStats = Static<typeof WorkerStatsSchema>;

/** One minute of the window. */
export const StatsPointSchema = Type.Object({
  at: Type.String({ format: 'date-time', description: 'Start of the minute' }),
  submitted: Type.Integer(),
  completed: Type.Integer({ description: 'Jobs that succeeded' }),
  failed: Type.Integer(),
  queueMsP50: Ms,
  queueMsP95: Ms,
  inferMsP50: Ms,
  inferMsP95: Ms,
  avgBatchSize: Nullable(Type.Number()),
});
export type StatsPoint = Static<typeof StatsPointSchema>;

const exampleLatency = { queueMsP50: 3, queueMsP95: 11, queueMsP99: 24, inferMsP50: 1.8, inferMsP95: 3.9, inferMsP99: 6.2 };
const exampleBreakdown = { completedPerSec: 41.2, completed: 2472, failed: 1, errorRate: 0.0004, ...exampleLatency, avgBatchSize: 7.6 };
/** A minute-long window, so one point of the series: longer windows have one per minute. */
const exampleStats = {
  generatedAt: '2025-06-02T09:31:00.000Z',
  windowMinutes: 1,
  scope: 'all',
  submittedPerSec: 42.5,
  completedPerSec: 41.2,
  failedPerSec: 0.017,
  errorRate: 0.0004,
  avgBatchSize: 7.6,
  ...exampleLatency,
  workersOnline: 1,
  queues: [{ model: 'mlp', high: 0, normal: 14, low: 3, batch: 0, active: 8, delayed: 0, workers: 1, paused: false, oldestQueuedS: 0.35 }],
  models: [{ model: 'mlp', version: 2, ...exampleBreakdown }],
  workers: [{ workerId: 'gpu-node-1-cuda0-4242', ...exampleBreakdown }],
  series: [
    {
      at: EXAMPLE_TIME,
      submitted: 2550,
      completed: 2472,
      failed: 1,
      queueMsP50: 3,
      queueMsP95: 11,
      inferMsP50: 1.8,
      inferMsP95: 3.9,
      avgBatchSize: 7.6,
    },
  ],
};

export const StatsSchema = Type.Object(
  {
    generatedAt: Type.String({ format: 'date-time' }),
    windowMinutes: Type.Integer(),
    scope: Type.Union([Type.Literal('all'), Type.Literal('key')], { description: 'Job figures cover every key (admin) or only the caller' }),
    submittedPerSec: Type.Number({ description: 'Over the last 60 s' }),
    completedPerSec: Type.Number({ description: 'Over the last 60 s' }),
    failedPerSec: Type.Number({ description: 'Over the last 60 s' }),
    errorRate: Type.Number({ description: 'failed ÷ (completed + failed) over the window' }),
    avgBatchSize: Nullable(Type.Number({ description: 'Mean batch size of the jobs that succeeded in the window' })),
    ...LatencyFields,
    workersOnline: Type.Integer(),
    queues: Type.Array(QueueStatsSchema),
    models: Type.Array(ModelVersionStatsSchema, { description: 'Per model version, over the window: to judge a canary against the version it replaces' }),
    workers: Type.Array(WorkerStatsSchema, { description: 'Per worker that finished jobs in the window' }),
    series: Type.Array(StatsPointSchema),
  },
  { $id: 'Stats', examples: [exampleStats] },
);
export type Stats = Static<typeof StatsSchema>;
