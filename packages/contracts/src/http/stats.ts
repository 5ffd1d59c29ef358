import { Type, type Static } from '@sinclair/typebox';
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
  active: Type.Integer({ description: 'Held by a worker' }),
  delayed: Type.Integer({ description: 'Waiting out a retry backoff' }),
  workers: Type.Integer({ description: 'Live workers consuming this queue' }),
});
export type QueueDepth = Static<typeof QueueDepthSchema>;

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
  { $id: 'Stats' },
);
export type Stats = Static<typeof StatsSchema>;
