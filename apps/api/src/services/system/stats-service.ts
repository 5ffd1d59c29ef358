import type { QueueDepth, Stats, WorkerStatus } from '@inferq/contracts';
import { listLatestModels, readJobBreakdown, readJobStats, readOldestQueuedAges, type JobBreakdown, type JobStatsPoint, type Pool } from '@inferq/db';
import { listWorkerStatuses, type JobProducer, type RedisClient } from '@inferq/queue';

/** Per-second rates are taken over the last minute: a live figure, not the window's average. */
const RATE_SECONDS = 60;
const MINUTE_MS = 60_000;

const emptyPoint = (at: Date): JobStatsPoint => ({
  at,
  submitted: 0,
  completed: 0,
  failed: 0,
  queueMsP50: null,
  queueMsP95: null,
  inferMsP50: null,
  inferMsP95: null,
  avgBatchSize: null,
});

/** Every minute of the window, oldest first; minutes without activity are zeros. */
function fillMinutes(points: JobStatsPoint[], windowMinutes: number, now: number): JobStatsPoint[] {
  const byMinute = new Map(points.map((p) => [p.at.getTime(), p]));
  const last = Math.floor(now / MINUTE_MS) * MINUTE_MS;
  return Array.from({ length: windowMinutes }, (_, i) => {
    const at = last - (windowMinutes - 1 - i) * MINUTE_MS;
    return byMinute.get(at) ?? emptyPoint(new Date(at));
  });
}

/** Throughput and error rate beside the breakdown's counts and percentiles. */
function withRates<T extends JobBreakdown>(b: T, windowMinutes: number) {
  const finished = b.completed + b.failed;
  return { ...b, completedPerSec: b.completed / (windowMinutes * 60), errorRate: finished === 0 ? 0 : b.failed / finished };
}

/** Runs one read of a dependency: the metrics pass their scrape's time limit here (ScrapeReads.read). */
type DependencyRead = <T>(source: 'postgres' | 'redis', read: () => Promise<T>) => Promise<T>;

/** Every model's queue right now, with the live workers consuming it, and how many workers are live. */
export async function readQueueOverview(
  deps: {
    pool: Pool;
    producer: JobProducer;
    redis: RedisClient;
  },
  read: DependencyRead = (_source, r) => r(),
): Promise<{ queues: QueueDepth[]; workersOnline: number }> {
  const [models, workers] = await Promise.all([
    read('postgres', () => listLatestModels(deps.pool)),
    read('redis', () => listWorkerStatuses(deps.redis, deps.producer.prefix)),
  ]);
  const queues = await Promise.all(
    models.map(async (m) => ({
      ...(await read('redis', () => deps.producer.readDepth(m.name))),
      workers: workers.filter((w) => w.modelsServed.includes(m.name)).length,
    })),
  );
  return { queues, workersOnline: workers.length };
}

/**
 * The console's overview in one call, from the real sources: job figures from
 * Postgres (the caller's jobs, or everyone's for an admin), queue depth from
 * the BullMQ queues, live workers from their heartbeats; and the workers page's
 * list of those workers.
 */
export function createStatsService(deps: { pool: Pool; producer: JobProducer; redis: RedisClient }) {
  return {
    /** Every live worker process, from its heartbeat in the registry (GET /v1/workers). */
    listWorkers(): Promise<WorkerStatus[]> {
      return listWorkerStatuses(deps.redis, deps.producer.prefix);
    },

    async readStats(windowMinutes: number, ownerKeyId: string | null): Promise<Stats> {
      const [jobs, breakdown, { queues, workersOnline }, oldest] = await Promise.all([
        readJobStats(deps.pool, { windowMinutes, rateSeconds: RATE_SECONDS, ownerKeyId }),
        readJobBreakdown(deps.pool, { windowMinutes, ownerKeyId }),
        readQueueOverview(deps),
        readOldestQueuedAges(deps.pool),
      ]);
      const oldestByModel = new Map<string, number>();
      for (const a of oldest) oldestByModel.set(a.model, Math.max(a.ageS, oldestByModel.get(a.model) ?? 0));
      const { recent, window } = jobs;
      const finished = window.completed + window.failed;
      return {
        generatedAt: new Date().toISOString(),
        windowMinutes,
        scope: ownerKeyId === null ? 'all' : 'key',
        submittedPerSec: recent.submitted / RATE_SECONDS,
        completedPerSec: recent.completed / RATE_SECONDS,
        failedPerSec: recent.failed / RATE_SECONDS,
        errorRate: finished === 0 ? 0 : window.failed / finished,
        avgBatchSize: window.avgBatchSize,
        queueMsP50: window.queueMsP50,
        queueMsP95: window.queueMsP95,
        queueMsP99: window.queueMsP99,
        inferMsP50: window.inferMsP50,
        inferMsP95: window.inferMsP95,
        inferMsP99: window.inferMsP99,
        workersOnline,
        queues: queues.map((q) => ({ ...q, oldestQueuedS: oldestByModel.get(q.model) ?? null })),
        models: breakdown.models.map((m) => withRates(m, windowMinutes)),
        workers: breakdown.workers.map((w) => withRates(w, windowMinutes)),
        series: fillMinutes(jobs.series, windowMinutes, Date.now()).map((p) => ({ ...p, at: p.at.toISOString() })),
      };
    },
  };
}
export type StatsService = ReturnType<typeof createStatsService>;
