import type { Stack } from '@inferq/test-utils';
import type { TierCosts } from '../costs/tier-costs.ts';
import { drainQueued, type DrainRun } from '../drain-run.ts';
import { goal, goalOverRuns, type CostRun, type Goal } from '../scenario.ts';
import { median, round } from '../stats.ts';
import { workerEntries } from '../worker-entries.ts';
import { deviceCapacityItemsPerS, deviceTimeEnv, type DeviceTime } from './device-time.ts';

export interface TimedDrainOptions {
  model: string;
  /** Jobs a drain (one item each). */
  jobs: number;
  /** Jobs each drain's worker runs first, outside its readings (drainQueued's warmupJobs). */
  warmupJobs?: number;
  /** Drains; each figure is the median of them. */
  rounds: number;
  body: (i: number) => unknown;
  workerEnv: Record<string, string>;
  device: DeviceTime;
  /** Raw onnxruntime's CPU per item in the same run (the lower of its runs): the yardstick the bookkeeping goals are shares of. */
  rawCpuUsPerItem: number | null;
  /** WORKER_FEEDERS values for one more drain each after the rounds (which run with one feeder, the default). */
  feederSweep?: number[];
  /** A bare BullMQ worker's drain of as many queued jobs (measureBareBullmq, queuedFirst): BullMQ's own part of the bookkeeping. */
  bullmqFloor?: BareDrain;
  /** The same drain with a group of jobs in each queue entry (measureBareBullmq's groupSize): what the lever would save. */
  bullmqGroupedFloor?: BareDrain & { groupSize: number };
}

type BareDrain = { jobsPerS: number; costs: TierCosts };

/** Issue 45's WAL goals, inputs of any size: to the result, and over the job's life. */
const WAL_TO_RESULT_GOAL_BYTES = 2048;
const WAL_LIFE_GOAL_BYTES = 4096;

/** Figures added up (µs, bytes); null when one of them was not read. */
const sum = (...us: Array<number | null>): number | null => (us.some((u) => u === null) ? null : (us as number[]).reduce((n, u) => n + u, 0));

/** What a job costs beyond the session: the worker's main and other threads, Redis and Postgres (µs); null where a tier was not read. */
function bookkeepingUs(c: TierCosts): { worker: number | null; redis: number | null; postgres: number | null; total: number | null } {
  const worker = sum(c.cpuUsPerJob['worker main'], c.cpuUsPerJob['worker other']);
  const { redis, postgres } = c.cpuUsPerJob;
  return { worker, redis, postgres, total: sum(worker, redis, postgres) };
}

const medianOf = (runs: DrainRun[], figure: (r: DrainRun) => number | null): number | null => {
  const values = runs.map(figure);
  return values.some((v) => v === null) ? null : median(values as number[]);
};

const share = (us: number | null, raw: number | null): number | null => (us === null || raw === null || raw <= 0 ? null : us / raw);

/** The timed drains' goals, each over the rounds: the median beside the run-to-run range. */
function timedDrainGoals(runs: DrainRun[], capacity: number, rawCpuUsPerItem: number | null, walLife: number | null): Goal[] {
  const goals: Goal[] = [
    goalOverRuns(
      'timed device fed: worker side ÷ the device’s capacity',
      runs.map((r) => r.itemsPerS / capacity),
      '>=',
      0.9,
    ),
    goalOverRuns(
      'bookkeeping a job (worker beyond the session + Redis + Postgres) ÷ raw CPU an item',
      runs.map((r) => share(bookkeepingUs(r.costs).total, rawCpuUsPerItem)),
      '<=',
      0.75,
    ),
    goalOverRuns(
      'Postgres CPU a job ÷ raw CPU an item',
      runs.map((r) => share(r.costs.cpuUsPerJob.postgres, rawCpuUsPerItem)),
      '<=',
      0.3,
    ),
    goalOverRuns(
      'WAL a job end to end (submit + worker side)',
      runs.map((r) => sum(r.costs.walBytesPerJob, r.submitCosts.walBytesPerJob)),
      '<=',
      WAL_TO_RESULT_GOAL_BYTES,
      'B',
      0,
    ),
  ];
  // Read for the first drain's jobs alone (their freeze and purge): one figure.
  if (walLife !== null)
    goals.push(goal('WAL a job over its life (to its result, its freeze and its purge)', round(walLife, 0), '<=', WAL_LIFE_GOAL_BYTES, 'B'));
  return goals;
}

/**
 * Worker-side drains on the timed device: whether the pipeline keeps a device
 * of this speed fed (items/s ÷ its capacity, its busy share) and what the
 * bookkeeping of a job costs when inference costs almost no CPU.
 */
export async function timedDeviceDrains(stack: Stack, o: TimedDrainOptions) {
  const drain = (env: Record<string, string> = {}, laterWal = false) =>
    drainQueued(stack, {
      laterWal,
      model: o.model,
      jobs: o.jobs,
      warmupJobs: o.warmupJobs,
      body: o.body,
      workerEnv: { ...o.workerEnv, ...deviceTimeEnv(o.device), ...env },
      sessionCores: 1,
      workerEntry: workerEntries().timedWorker,
    });
  const runs: DrainRun[] = [];
  // The first drain's jobs also give the WAL a job writes after its result (their freeze and purge).
  for (let i = 0; i < o.rounds; i++) runs.push(await drain({}, i === 0));
  const sweep: Array<{ feeders: number; run: DrainRun }> = [];
  for (const feeders of o.feederSweep ?? []) sweep.push({ feeders, run: await drain({ WORKER_FEEDERS: String(feeders) }) });
  const capacity = deviceCapacityItemsPerS(o.device);
  const itemsPerS = median(runs.map((r) => r.itemsPerS));
  const worker = medianOf(runs, (r) => bookkeepingUs(r.costs).worker);
  const redis = medianOf(runs, (r) => bookkeepingUs(r.costs).redis);
  const postgres = medianOf(runs, (r) => bookkeepingUs(r.costs).postgres);
  const total = medianOf(runs, (r) => bookkeepingUs(r.costs).total);
  const wal = medianOf(runs, (r) => r.costs.walBytesPerJob);
  const submitWal = medianOf(runs, (r) => r.submitCosts.walBytesPerJob);
  const walEndToEnd = medianOf(runs, ({ costs, submitCosts }) => sum(costs.walBytesPerJob, submitCosts.walBytesPerJob));
  const later = runs[0]?.laterWal ?? null;
  const walLife = sum(walEndToEnd, later?.freeze ?? null, later?.purge ?? null);
  const medianRun = runs.find((r) => r.itemsPerS === itemsPerS)!;
  const main = medianOf(runs, (r) => r.costs.cpuUsPerJob['worker main']);
  const session = medianOf(runs, (r) => r.costs.cpuUsPerJob['worker session']);
  // At 90 % of the device's capacity, with a job's CPU what it was here: the worker's cores, and its event loops (one core each).
  const ninetyPct = 0.9 * capacity;
  const hostCores = worker === null || session === null ? null : (ninetyPct * (worker + session)) / 1e6;
  const feeders = main === null ? null : Math.ceil((ninetyPct * main) / 1e6);
  const floor = o.bullmqFloor;
  const floorUs = floor ? sum(floor.costs.cpuUsPerJob.worker, floor.costs.cpuUsPerJob.redis) : null;
  const grouped = o.bullmqGroupedFloor;
  const groupedUs = grouped ? sum(grouped.costs.cpuUsPerJob.worker, grouped.costs.cpuUsPerJob.redis) : null;
  const metrics = {
    timed_device_batch_ms: o.device.batchMs,
    timed_device_batch_items: o.device.batchItems,
    timed_device_capacity_items_per_s: round(capacity, 0),
    timed_device_jobs: o.jobs,
    timed_device_warmup_jobs: o.warmupJobs ?? 0,
    timed_device_items_per_s: round(itemsPerS, 0),
    timed_device_items_per_s_rounds: runs.map((r) => Math.round(r.itemsPerS)).join(' / '),
    timed_device_fed_ratio: round(itemsPerS / capacity, 3),
    timed_device_busy: round(median(runs.map((r) => r.deviceBusy)), 3),
    timed_device_avg_batch_size: round(
      medianOf(runs, (r) => r.avgBatchSize),
      1,
    ),
    timed_device_worker_us_per_job: round(worker, 1),
    timed_device_session_thread_us_per_job: round(
      medianOf(runs, (r) => r.costs.cpuUsPerJob['worker session']),
      1,
    ),
    timed_device_redis_us_per_job: round(redis, 1),
    timed_device_postgres_us_per_job: round(postgres, 1),
    timed_device_bookkeeping_us_per_job: round(total, 1),
    timed_device_worker_cores_for_90pct_busy: round(hostCores, 1),
    timed_device_event_loops_for_90pct_busy: feeders,
    timed_device_bookkeeping_to_raw_item_cpu: round(share(total, o.rawCpuUsPerItem), 3),
    timed_device_postgres_to_raw_item_cpu: round(share(postgres, o.rawCpuUsPerItem), 3),
    timed_device_wal_bytes_per_job: round(wal, 0),
    timed_device_submit_wal_bytes_per_job: round(submitWal, 0),
    wal_bytes_per_job_end_to_end: round(walEndToEnd, 0),
    timed_device_freeze_wal_bytes_per_job: round(later?.freeze ?? null, 0),
    timed_device_purge_wal_bytes_per_job: round(later?.purge ?? null, 0),
    wal_bytes_per_job_life: round(walLife, 0),
    timed_device_submit_postgres_us_per_job: round(
      medianOf(runs, (r) => r.submitCosts.cpuUsPerJob.postgres),
      1,
    ),
    timed_device_pg_statements_per_job: round(
      medianOf(runs, (r) => r.costs.pgStatementsPerJob),
      2,
    ),
    timed_device_redis_cmds_per_job: round(
      medianOf(runs, (r) => r.costs.redisCmdsPerJob),
      2,
    ),
    timed_device_failed_jobs: runs.reduce((n, r) => n + r.failed, 0) + sweep.reduce((n, s) => n + s.run.failed, 0),
    // With feeder threads the per-thread split no longer maps to roles (the busiest other thread is a feeder): the process's CPU as a whole.
    ...Object.fromEntries(
      sweep.flatMap(({ feeders, run }) => [
        [`timed_device_items_per_s_feeders_${feeders}`, Math.round(run.itemsPerS)],
        [`timed_device_fed_ratio_feeders_${feeders}`, round(run.itemsPerS / capacity, 3)],
        [`timed_device_busy_feeders_${feeders}`, round(run.deviceBusy, 3)],
        [`timed_device_worker_process_us_per_job_feeders_${feeders}`, round(run.costs.cpuUsPerJob.worker, 1)],
      ]),
    ),
    timed_device_worker_process_us_per_job: round(
      medianOf(runs, (r) => r.costs.cpuUsPerJob.worker),
      1,
    ),
    ...(floor && {
      bullmq_floor_jobs_per_s: round(floor.jobsPerS, 0),
      bullmq_floor_worker_us_per_job: round(floor.costs.cpuUsPerJob.worker, 1),
      bullmq_floor_redis_us_per_job: round(floor.costs.cpuUsPerJob.redis, 1),
      bullmq_floor_to_raw_item_cpu: round(share(floorUs, o.rawCpuUsPerItem), 3),
    }),
    ...(grouped && {
      bullmq_floor_group_size: grouped.groupSize,
      bullmq_floor_grouped_worker_us_per_job: round(grouped.costs.cpuUsPerJob.worker, 1),
      bullmq_floor_grouped_redis_us_per_job: round(grouped.costs.cpuUsPerJob.redis, 1),
      bullmq_floor_grouped_to_raw_item_cpu: round(share(groupedUs, o.rawCpuUsPerItem), 3),
    }),
  };
  const goals = timedDrainGoals(runs, capacity, o.rawCpuUsPerItem, walLife);
  const costs: CostRun[] = [{ name: 'worker side, timed device', costs: medianRun.costs, measuredJobsPerS: round(itemsPerS, 0) }];
  const notes = [
    `Timed device (apps/bench/src/timed-device): the worker's session stood in for by one whose batch of up to ${o.device.batchItems} items ` +
      `takes ${o.device.batchMs} ms of wall time and almost no CPU (BENCH_DEVICE_BATCH_MS, BENCH_DEVICE_BATCH_ITEMS; default the H200's CNN batch), ` +
      `a capacity of ${Math.round(capacity)} items/s. ${o.rounds} worker-side drains of ${o.jobs} jobs, each by a worker that drained ` +
      `${o.warmupJobs ?? 0} first, unmeasured; each figure the median. ` +
      "Busy: the batches' inference time over the drain's span. Bookkeeping: the worker's main and other threads, Redis and Postgres CPU a job " +
      '(the session thread left out), against raw onnxruntime’s CPU an item in the same run (the lower of two raw runs, before the ' +
      'stack starts and just before these drains: raw_onnx_cpu_us_per_item_runs); WAL end to end (the submits, metered apart, ' +
      'plus the drain) against 2 KB whatever the input weighs (issue 45), and 4 KB over the life: the first drain’s jobs also ' +
      'frozen (VACUUM (FREEZE), the aggressive ' +
      'vacuum a job kept past about 150 M transactions meets) and purged by the retention sweep’s statement, each after a CHECKPOINT, ' +
      'as always lies between (the first change of a page after one writes its full image: the TOASTed input again). ' +
      'Cores for 90 % busy: the worker process’s CPU a job (every thread) times 90 % of the capacity, on cores like these; ' +
      'event loops: its main thread’s CPU a job the same way, one core each: the feeder threads (WORKER_FEEDERS) one worker process needs.' +
      (sweep.length
        ? ` Then one drain each with WORKER_FEEDERS ${sweep.map((s) => s.feeders).join(', ')} (the *_feeders_N figures; BENCH_FEEDERS): ` +
          'items/s, fed share, busy share and the worker process’s CPU a job, every thread together.'
        : '') +
      (floor
        ? ' BullMQ floor (bullmq_floor_*): a bare BullMQ Worker with a no-op processor, in the bench process, draining as many ' +
          'queued jobs with inferq’s job options and a payload of the same shape: its process’s CPU and Redis’s a job, the part of ' +
          'the bookkeeping that a fetch, a lock and an acknowledgement a job cost before inferq does anything, against raw’s CPU an item.'
        : '') +
      (grouped
        ? ` Grouped (bullmq_floor_grouped_*): the same drain with ${grouped.groupSize} jobs' payloads in each queue entry (a group of ` +
          'submits as one entry, split at the worker, as inferq’s group entries are: architecture.md step 7), a job’s share of an entry’s cost.'
        : ''),
  ];
  return { metrics, goals, costs, notes };
}
