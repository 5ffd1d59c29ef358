import type { Pool } from '@inferq/db';
import { processCpuSeconds, processTreeCpuSeconds, readParents, splitThreadCpu, threadCpuSeconds } from './process-cpu.ts';
import { readPostgres, type PostgresReading } from './postgres-activity.ts';
import { commandDeltas, isSingleNode, readRedis, type RedisReading } from './redis-activity.ts';

/** The tiers a job's CPU is split over; `worker main`/`session`/`other` split `worker` by thread. */
export const TIERS = ['api', 'worker', 'worker main', 'worker session', 'worker other', 'redis', 'postgres', 'load generator'] as const;
export type Tier = (typeof TIERS)[number];

export interface TierTargets {
  /** API processes (or a bare route's process). */
  apiPids?: number[];
  /** Worker processes, each split by thread (main, session, other). */
  workerPids?: number[];
  /** The Redis the run uses: commands from INFO commandstats, CPU when it runs on this machine; one node only (else not read). */
  redisUrl?: string;
  /** A pool on the run's database: statements, transactions, WAL, and CPU of the cluster when it runs on this machine. */
  pool?: Pool;
  /** The tier this (bench) process stands for: the load generator, or the worker when a ceiling runs its work in process. @default 'load generator' */
  self?: 'load generator' | 'worker';
  /** Cores the session tier would have (its intra-op thread count), for the throughput the costs predict. @default 1 */
  sessionCores?: number;
}

export interface TierCosts {
  jobs: number;
  /** Wall seconds between the two readings. */
  spanS: number;
  /** CPU microseconds per job by tier (all processes of the tier together); null where the tier was not measured. */
  cpuUsPerJob: Record<Tier, number | null>;
  /** API + worker + Redis + Postgres: what the fleet spends on a job (the load generator is the client, left out). */
  fleetCpuUsPerJob: number;
  redisCmdsPerJob: number | null;
  /** Per command, calls per job, most frequent first. */
  redisCmdsPerJobByName: Record<string, number>;
  /** pg_stat_statements calls per job; null when the server does not load it (see pgTransactionsPerJob). */
  pgStatementsPerJob: number | null;
  pgTransactionsPerJob: number | null;
  walBytesPerJob: number | null;
  /**
   * Jobs per second the costs allow if each tier had its own cores: each API process one, each worker's main thread
   * (with its other threads) one and its session thread `sessionCores`, Redis one, Postgres one; the lowest tier's.
   */
  predictedJobsPerS: number | null;
  /** The tier that sets predictedJobsPerS. */
  limitingTier: string | null;
}

interface Reading {
  atMs: number;
  self: number | null;
  api: Array<number | null>;
  workers: Array<{ pid: number; total: number | null; threads: Map<number, number> }>;
  redis: RedisReading | null;
  redisCpu: number | null;
  pg: (PostgresReading & { withStatements: boolean }) | null;
  pgCpu: number | null;
}

async function read(t: TierTargets, withStatements?: boolean): Promise<Reading> {
  const [redis, pg] = await Promise.all([
    t.redisUrl && isSingleNode(t.redisUrl) ? readRedis(t.redisUrl) : null,
    t.pool ? readPostgres(t.pool, withStatements) : null,
  ]);
  const parentOf = readParents();
  return {
    atMs: performance.now(),
    self: processCpuSeconds(process.pid),
    api: (t.apiPids ?? []).map((pid) => processTreeCpuSeconds(pid, parentOf)),
    workers: (t.workerPids ?? []).map((pid) => ({ pid, total: processTreeCpuSeconds(pid, parentOf), threads: threadCpuSeconds(pid) })),
    redis,
    redisCpu: redis?.localPid ? processTreeCpuSeconds(redis.localPid, parentOf) : null,
    pg,
    pgCpu: pg?.postmasterPid ? processTreeCpuSeconds(pg.postmasterPid, parentOf) : null,
  };
}

/** The sum of after − before over pairs; null when any reading is missing or there are none. */
function sumDeltas(before: Array<number | null>, after: Array<number | null>): number | null {
  if (before.length === 0) return null;
  let sum = 0;
  for (let i = 0; i < before.length; i++) {
    if (before[i] === null || after[i] === null) return null;
    sum += after[i]! - before[i]!;
  }
  return sum;
}

/** The throughput each tier allows on its own cores, and the lowest. */
export function predictThroughput(us: Record<Tier, number | null>, cores: { api: number; workers: number; sessionCores: number }) {
  const split = us['worker main'] !== null;
  const capacities: Array<[string, number | null, number]> = [
    ['api', us.api, cores.api],
    ...(split
      ? ([
          ['worker main', us['worker main']! + us['worker other']!, cores.workers],
          ['worker session', us['worker session'], cores.workers * cores.sessionCores],
        ] as Array<[string, number | null, number]>)
      : ([['worker', us.worker, Math.max(1, cores.workers) * cores.sessionCores]] as Array<[string, number | null, number]>)),
    ['redis', us.redis, 1],
    ['postgres', us.postgres, 1],
  ];
  let best: { tier: string; jobsPerS: number } | null = null;
  for (const [tier, perJob, n] of capacities) {
    if (perJob === null || perJob <= 0 || n <= 0) continue;
    const jobsPerS = (n * 1e6) / perJob;
    if (!best || jobsPerS < best.jobsPerS) best = { tier, jobsPerS };
  }
  return best;
}

/**
 * Reads every tier now; `stop(jobs)` reads again and returns what the span cost per job. Scenarios and ceilings call it
 * around their measured span. Shared servers count everything done in the span, other clients' work included.
 */
export async function meterTiers(t: TierTargets): Promise<{ stop(jobs: number): Promise<TierCosts> }> {
  const before = await read(t);
  return {
    async stop(jobs) {
      const after = await read(t, before.pg?.withStatements);
      const perJob = (v: number | null) => (v === null || jobs === 0 ? null : v / jobs);
      const us = (s: number | null) => (s === null || jobs === 0 ? null : (s * 1e6) / jobs);
      const selfS = before.self === null || after.self === null ? null : after.self - before.self;
      let workerS = sumDeltas(
        before.workers.map((w) => w.total),
        after.workers.map((w) => w.total),
      );
      const threads = { main: 0, session: 0, other: 0 };
      for (const [i, w] of after.workers.entries()) {
        const s = splitThreadCpu(w.pid, before.workers[i]!.threads, w.threads);
        threads.main += s.main;
        threads.session += s.session;
        threads.other += s.other;
      }
      const hasThreads = after.workers.some((w) => w.threads.size > 0);
      const self = t.self ?? 'load generator';
      if (self === 'worker') workerS = (workerS ?? 0) + (selfS ?? 0);
      const cpuUsPerJob: Record<Tier, number | null> = {
        api: us(sumDeltas(before.api, after.api)),
        worker: us(workerS),
        'worker main': hasThreads ? us(threads.main) : null,
        'worker session': hasThreads ? us(threads.session) : null,
        'worker other': hasThreads ? us(threads.other) : null,
        redis: us(before.redisCpu === null || after.redisCpu === null ? null : after.redisCpu - before.redisCpu),
        postgres: us(before.pgCpu === null || after.pgCpu === null ? null : after.pgCpu - before.pgCpu),
        'load generator': self === 'load generator' ? us(selfS) : null,
      };
      const calls = before.redis && after.redis ? commandDeltas(before.redis.calls, after.redis.calls) : null;
      const byName = [...(calls ?? [])].sort((a, b) => b[1] - a[1]).map(([name, n]) => [name, n / jobs] as const);
      const pgBefore = before.pg;
      const pgAfter = after.pg;
      const predicted = predictThroughput(cpuUsPerJob, {
        api: t.apiPids?.length ?? 0,
        workers: t.workerPids?.length || (self === 'worker' ? 1 : 0),
        sessionCores: t.sessionCores ?? 1,
      });
      return {
        jobs,
        spanS: (after.atMs - before.atMs) / 1000,
        cpuUsPerJob,
        fleetCpuUsPerJob: (['api', 'worker', 'redis', 'postgres'] as const).reduce((n, tier) => n + (cpuUsPerJob[tier] ?? 0), 0),
        redisCmdsPerJob: calls ? perJob([...calls.values()].reduce((a, b) => a + b, 0)) : null,
        redisCmdsPerJobByName: Object.fromEntries(byName),
        pgStatementsPerJob: pgBefore?.statements != null && pgAfter?.statements != null ? perJob(pgAfter.statements - pgBefore.statements) : null,
        pgTransactionsPerJob: pgBefore && pgAfter ? perJob(pgAfter.transactions - pgBefore.transactions) : null,
        walBytesPerJob: pgBefore && pgAfter ? perJob(Number(pgAfter.walBytes - pgBefore.walBytes)) : null,
        predictedJobsPerS: predicted?.jobsPerS ?? null,
        limitingTier: predicted?.tier ?? null,
      };
    },
  };
}
