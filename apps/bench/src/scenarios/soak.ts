import { readFile } from 'node:fs/promises';
import type { Pool } from '@inferq/db';
import { createRedisConnection } from '@inferq/queue';
import { ADMIN_KEY, auditJobs, installCompletionLog, mlpRows, startSteadyLoad, waitFor, type Stack, type TestProcess } from '@inferq/test-utils';
import { SHIPPED_WORKER_ENV } from '../driver.ts';
import { goal, type Scenario } from '../scenario.ts';
import { percentile, round } from '../stats.ts';

const RATE_PER_S = 150;
const WORKERS = 2;
const BUCKET_S = 10;
const PRIORITIES = ['high', 'normal', 'normal', 'low'] as const;

/** Seven jobs in ten are one MLP row, three a CNN image, at mixed priorities; the bodies are built once. */
function mixedBodies(): (i: number) => unknown {
  const mlp = Buffer.from(mlpRows(1, 1).buffer).toString('base64');
  const image = Buffer.from(Float32Array.from({ length: 3 * 32 * 32 }, (_, i) => Math.cos(i * 0.37)).buffer).toString('base64');
  const bodies = PRIORITIES.flatMap((priority) => [
    { model: 'mlp', priority, inputs: [{ name: 'features', datatype: 'FP32', shape: [1, 64], data: mlp }] },
    { model: 'cnn', priority, inputs: [{ name: 'image', datatype: 'FP32', shape: [1, 3, 32, 32], data: image }] },
  ]);
  return (i) => bodies[(i % PRIORITIES.length) * 2 + (i % 10 < 7 ? 0 : 1)];
}

async function rssMiB(pid: number | undefined): Promise<number | null> {
  if (pid === undefined) return null;
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kib = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  return kib === undefined ? null : round(Number(kib) / 1024, 1);
}

/** Resident memory of the API, each live worker, and Redis's own count. */
async function sampleMemory(stack: Stack, workers: TestProcess[], redisUsed: () => Promise<number>) {
  return {
    api: await rssMiB(stack.api.child.pid),
    workers: await Promise.all(workers.map((w) => rssMiB(w.child.pid))),
    redisUsedMiB: round((await redisUsed()) / 2 ** 20, 1),
  };
}

/** Jobs finished per BUCKET_S seconds since `from`, from the completion log. */
async function throughputSeries(pool: Pool, from: Date): Promise<Array<{ x: number; y: number }>> {
  const { rows } = await pool.query<{ b: number; n: number }>(
    `SELECT floor(extract(epoch FROM at - $1::timestamptz) / $2)::int AS b, count(*)::int AS n FROM test_completions GROUP BY b ORDER BY b`,
    [from, BUCKET_S],
  );
  return rows.map((r) => ({ x: r.b * BUCKET_S, y: r.n / BUCKET_S }));
}

export const soak: Scenario = {
  id: 'soak',
  title: 'Soak: mixed load for ten minutes, a worker killed every minute',
  async run(ctx) {
    const durationS = ctx.size(600, 6);
    const killEveryS = ctx.size(60, 2);
    const stack = await ctx.startStack();
    const redis = createRedisConnection(stack.ctx.env.REDIS_URL!, 'consumer');
    const redisUsed = async () => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? 0);
    try {
      const { pool } = stack.ctx;
      await installCompletionLog(pool);
      await stack.registerModel('mlp', { maxBatchSize: '32', maxBatchDelayMs: '2' });
      await stack.registerModel('cnn', { maxBatchSize: '16', maxBatchDelayMs: '5' });
      const startWorker = () =>
        stack.startWorker({ ...SHIPPED_WORKER_ENV, WORKER_LOCK_DURATION_MS: '5000', WORKER_STALLED_INTERVAL_MS: '2000', INTRA_OP_THREADS: '1' });
      const workers: TestProcess[] = [];
      for (let i = 0; i < WORKERS; i++) workers.push(await startWorker());

      const startedAt = new Date();
      const load = startSteadyLoad(stack, { ratePerS: RATE_PER_S, body: mixedBodies(), authorization: `Bearer ${ADMIN_KEY}` });
      // Memory is compared from the end of the first interval, once every process has warmed up.
      await new Promise((r) => setTimeout(r, (killEveryS * 1000) / 2));
      const memoryStart = await sampleMemory(stack, workers, redisUsed);
      let kills = 0;
      for (let t = killEveryS; t < durationS; t += killEveryS) {
        await new Promise((r) => setTimeout(r, Math.max(0, startedAt.getTime() + t * 1000 - Date.now())));
        await workers.shift()!.stop('SIGKILL');
        kills++;
        workers.push(await startWorker());
      }
      await new Promise((r) => setTimeout(r, Math.max(0, startedAt.getTime() + durationS * 1000 - Date.now())));
      const memoryEnd = await sampleMemory(stack, workers, redisUsed);
      const sent = await load.stop();
      await waitFor(async () => (await pool.query("SELECT 1 FROM jobs WHERE status IN ('queued', 'running') LIMIT 1")).rowCount === 0, {
        timeoutMs: 300_000,
        intervalMs: 500,
        what: 'the backlog to drain',
      });
      const ledger = await auditJobs(pool, sent);
      const { rows: e2e } = await pool.query<{ ms: number }>(
        "SELECT extract(epoch FROM finished_at - created_at) * 1000 AS ms FROM jobs WHERE status = 'succeeded'",
      );
      const jobMs = e2e.map((r) => Number(r.ms));
      const series = await throughputSeries(pool, startedAt);

      return {
        id: 'soak',
        title: this.title,
        metrics: {
          duration_s: durationS,
          workers: WORKERS,
          workers_killed: kills,
          offered_jobs_per_s: RATE_PER_S,
          ...ledger,
          reply_violations: sent.violations.length,
          finished_jobs_per_s: round(ledger.completed / durationS, 0),
          submit_p50_ms: round(percentile(sent.latenciesMs, 50)),
          submit_p99_ms: round(percentile(sent.latenciesMs, 99)),
          job_p50_ms: round(percentile(jobMs, 50)),
          job_p99_ms: round(percentile(jobMs, 99)),
          api_rss_start_mib: memoryStart.api,
          api_rss_end_mib: memoryEnd.api,
          worker_rss_start_mib: memoryStart.workers.join(' / '),
          worker_rss_end_mib: memoryEnd.workers.join(' / '),
          redis_used_start_mib: memoryStart.redisUsedMiB,
          redis_used_end_mib: memoryEnd.redisUsedMiB,
        },
        goals: [
          goal('jobs lost', ledger.lost, '<=', 0),
          goal('results written twice', ledger.duplicated, '<=', 0),
          goal('API resident memory, end ÷ start', memoryStart.api && memoryEnd.api ? round(memoryEnd.api / memoryStart.api, 2) : null, '<=', 1.25),
        ],
        charts: [
          {
            file: 'soak-throughput',
            title: 'Soak: jobs finished per second (a worker killed every minute)',
            xLabel: 'seconds since start',
            yLabel: 'jobs/s',
            series: [{ name: 'finished', points: series }],
          },
        ],
        notes: [
          `${RATE_PER_S} submissions/s for ${durationS} s, open loop: 7 in 10 one-row MLP jobs, 3 in 10 CNN ` +
            `images, priorities high/normal/normal/low in turn. ${WORKERS} workers (intraOpNumThreads 1, 5 s ` +
            `locks); every ${killEveryS} s the oldest is killed with SIGKILL and a new one started.`,
          'Lost: accepted (202) jobs not finished once the backlog drained. Duplicated: results written more ' +
            'than once (a trigger logs every write of a result) plus refused submissions recorded anyway. Rerun: ' +
            'jobs claimed more than once (attempts > 1), the cost of the kills.',
          `Memory: resident set of the API and of the live workers (the workers at the end are not the ones at ` +
            `the start: they are replaced every ${killEveryS} s), sampled ${killEveryS / 2} s in and at the end; ` +
            `Redis's used_memory at the same moments.`,
        ],
      };
    } finally {
      redis.disconnect();
      await stack.close();
    }
  },
};
