import {
  claimDueWebhooks,
  dropExpiredJobPartitions,
  ensureJobPartitions,
  expireOverdueJobs,
  findExpiredJobIds,
  CLOCK_SLACK_MS,
  findUnfinishedJobs,
  idRangeSql,
  listJobPartitions,
  liveJobIds,
  type Pool,
} from '@inferq/db';
import { ADMIN_KEY, fillYearOfJobs, makePastJobPartitions, waitFor, type Stack } from '@inferq/test-utils';
import { loadBenchEnv } from '../bench-env.ts';
import { readPostgres } from '../costs/postgres-activity.ts';
import { processTreeCpuSeconds } from '../costs/process-cpu.ts';
import { mlpJobBody } from '../driver.ts';
import { runLoad, type LoadResult } from '../load/autocannon.ts';
import { goal, type Scenario, type ScenarioResult } from '../scenario.ts';
import { median, round } from '../stats.ts';

// A year in a box: the same stack on day one and with the partitions and rows
// that 13 months of default retention leave (tombstones before 7 days,
// finished jobs after, a few live ones), each request and sweep measured on
// both; the goal is every ratio ≤ 1.2.

const DAY_MS = 86_400_000;
const CONNECTIONS = 10;
const HEADERS = { authorization: `Bearer ${ADMIN_KEY}` };

interface Side {
  partitions: number;
  rows: number;
  loads: Record<string, LoadResult>;
  /** CPU per request of the API process and of Postgres (every backend of the server), polls of finished jobs and submits. */
  cpuUs: Record<'apiPoll' | 'pgPoll' | 'apiSubmit' | 'pgSubmit', number | null>;
  sweepsMs: Record<string, number>;
  drainJobsPerS: number;
}

/** Median ms of `runs` calls of `fn`, after one unmeasured. */
async function timed(runs: number, fn: () => Promise<unknown>): Promise<number> {
  await fn();
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    ms.push(performance.now() - start);
  }
  return median(ms);
}

const SWEEPS: Record<string, (pool: Pool) => Promise<unknown>> = {
  'retention candidates': (pool) => findExpiredJobIds(pool, { defaultRetentionS: 7 * 86_400, limit: 1_000 }),
  'webhook claims': (pool) => claimDueWebhooks(pool, { limit: 100, maxAttempts: 5, leaseMs: 10_000 }),
  'deadline expiry': (pool) => expireOverdueJobs(pool, 1_000),
  'reconciler, full pass': (pool) => findUnfinishedJobs(pool, { minAgeMs: 0, limit: 1_000 }),
  'partitions ahead': (pool) => ensureJobPartitions(pool, { aheadDays: 7 }),
  'partition drop': (pool) => dropExpiredJobPartitions(pool, { olderThan: new Date(Date.now() - 400 * DAY_MS) }),
};

async function measure(stack: Stack, o: { days: number; jobsPerDay: number; durationS: number; sweepRuns: number }): Promise<Side> {
  const durationS = o.durationS;
  const pool = stack.ctx.pool;
  await stack.registerModel('mlp');
  const owner = (await stack.request('GET', '/v1/me')).json.keyId as string;
  if (o.days > 7) await makePastJobPartitions(pool, o.days);
  await fillYearOfJobs(pool, { owner, days: o.days, jobsPerDay: o.jobsPerDay });
  // A fresh API process over the filled schema: what one finds after a restart a year in (the first one read the
  // partitions before the fill). Then Postgres forgets nothing but its plans, as after a deploy.
  await stack.api.stop();
  const api = await stack.startApi();
  const baseUrl = api.baseUrl;
  const queue = async (action: 'pause' | 'resume') => {
    const res = await fetch(`${baseUrl}/v1/models/mlp/${action}`, { method: 'POST', headers: HEADERS });
    if (!res.ok) throw new Error(`${action}: ${res.status} ${await res.text()}`);
  };
  // The worker runs from here on, its queue paused until the drain: what its first seconds cost (finding its floors,
  // planning, the reconciler's first pass) stays out of what is measured.
  await queue('pause');
  await stack.startWorker();
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  // Finished jobs whole (not tombstones), and younger than the retention the API's sweeper applies meanwhile.
  const recent = (
    await pool.query<{ id: string }>(
      `SELECT id FROM jobs WHERE status = 'succeeded' AND purged_at IS NULL AND created_at > now() - interval '6 days' ORDER BY created_at DESC LIMIT 500`,
    )
  ).rows;
  const prefix = recent[0]!.id.slice(0, 8);
  const { postmasterPid } = await readPostgres(pool, false);
  const cpu = () => [processTreeCpuSeconds(api.process.child.pid!), postmasterPid === null ? null : processTreeCpuSeconds(postmasterPid)];
  const loads: Record<string, LoadResult> = {};
  /**
   * Runs a load after a second of it unmeasured (a process's first requests read its floors and plan afresh, once);
   * returns the CPU µs a measured request of the API process and of Postgres.
   */
  const load = async (name: string, path: string, extra: Partial<Parameters<typeof runLoad>[0]> = {}) => {
    const o = { url: `${baseUrl}${path}`, headers: HEADERS, connections: CONNECTIONS, ...extra };
    await runLoad({ ...o, durationS: 1 });
    const before = cpu();
    const result = (loads[name] = await runLoad({ ...o, durationS }));
    const after = cpu();
    return after.map((a, i) => (a === null || before[i] === null || result.requests === 0 ? null : ((a - before[i]!) * 1e6) / result.requests));
  };
  await load('list', '/v1/jobs?limit=50');
  await load('list, status filter', '/v1/jobs?limit=50&status=failed');
  await load('search, error code', '/v1/jobs?limit=50&errorCode=INFERENCE_FAILED');
  await load('search, id prefix', `/v1/jobs?limit=50&id=${prefix}`);
  await load('stats', '/v1/stats?windowMinutes=60');
  await load('usage', '/v1/usage?groupBy=model');
  const [apiPoll, pgPoll] = await load('poll, finished job', '/v1/jobs/x', { paths: recent.map((r) => `/v1/jobs/${r.id}`) });
  const submitsBefore = (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs`)).rows[0]!.n;
  const submitsFromMs = Date.now();
  const [apiSubmit, pgSubmit] = await load('submit', '/v1/jobs', {
    method: 'POST',
    headers: { ...HEADERS, 'content-type': 'application/json' },
    body: JSON.stringify(mlpJobBody('normal')),
  });

  const sweepsMs: Record<string, number> = {};
  for (const [name, sweep] of Object.entries(SWEEPS)) sweepsMs[name] = await timed(o.sweepRuns, () => sweep(pool));

  // The drain: the submits' jobs by the worker, from its first claim to its last result (the rows' times), so that
  // the few live jobs the fill left (which the reconciler puts back) do not count.
  await queue('resume');
  const unfinished = async () =>
    (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE ${idRangeSql(await liveJobIds(pool))} AND status IN ('queued', 'running')`))
      .rows[0]!.n;
  await waitFor(async () => (await unfinished()) === 0, { timeoutMs: 600_000, intervalMs: 200, what: 'the drain' });
  const drained = await pool.query<{ n: number; span_s: number }>(
    `SELECT count(*)::int AS n, EXTRACT(EPOCH FROM max(finished_at) - min(started_at))::float8 AS span_s FROM jobs
      WHERE ${idRangeSql({ fromMs: submitsFromMs - CLOCK_SLACK_MS, toMs: Date.now() + CLOCK_SLACK_MS })}
        AND created_at >= $1 AND status = 'succeeded'`,
    [new Date(submitsFromMs)],
  );
  return {
    partitions: (await listJobPartitions(pool)).length,
    rows: submitsBefore,
    loads,
    cpuUs: { apiPoll: apiPoll ?? null, pgPoll: pgPoll ?? null, apiSubmit: apiSubmit ?? null, pgSubmit: pgSubmit ?? null },
    sweepsMs,
    drainJobsPerS: drained.rows[0]!.n / drained.rows[0]!.span_s,
  };
}

export const yearOfData: Scenario = {
  id: '13',
  title: 'A year of data: every request and sweep on 13 months of partitions ÷ the same on day one',
  async run(ctx): Promise<ScenarioResult> {
    const settings = {
      jobsPerDay: ctx.size(2_000, 10),
      durationS: ctx.size(5, 1),
      sweepRuns: ctx.size(20, 2),
    };
    const days = ctx.size(395, 30);
    // BENCH_YEAR_VIEW_CACHE_MS=0: every poll reads Postgres (what one read costs); unset: the API's default.
    const viewCacheMs = loadBenchEnv().BENCH_YEAR_VIEW_CACHE_MS;
    const sides: Side[] = [];
    for (const d of [7, days]) {
      const stack = await ctx.startStack(viewCacheMs === undefined ? undefined : { JOB_VIEW_CACHE_MS: viewCacheMs });
      try {
        ctx.log(`  ${d} days of jobs, ${settings.jobsPerDay} a day`);
        sides.push(await measure(stack, { days: d, ...settings }));
      } finally {
        await stack.close();
      }
    }
    const [dayOne, year] = sides as [Side, Side];
    const rows: Array<Array<string | number | null>> = [];
    const metrics: ScenarioResult['metrics'] = {
      day_one_partitions: dayOne.partitions,
      year_partitions: year.partitions,
      year_rows: year.rows,
      ...Object.fromEntries(
        (['apiPoll', 'pgPoll', 'apiSubmit', 'pgSubmit'] as const).flatMap((k) => {
          const name = k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
          return [
            [`day_one_${name}_cpu_us`, round(dayOne.cpuUs[k], 0)],
            [`year_${name}_cpu_us`, round(year.cpuUs[k], 0)],
          ];
        }),
      ),
    };
    // Requests and the drain; the sweeps apart: they run once a second to once an hour, and a few partitions more cost ms.
    const ratios: number[] = [];
    const sweepRatios: number[] = [];
    const key = (name: string) => name.replace(/[^a-z0-9]+/g, '_').replace(/_$/, '');
    for (const name of Object.keys(dayOne.loads)) {
      const a = dayOne.loads[name]!;
      const b = year.loads[name]!;
      // Cost: requests a second on day one over a year in (above 1: slower a year in).
      const ratio = a.reqPerS / b.reqPerS;
      ratios.push(ratio);
      metrics[`${key(name)}_cost_ratio`] = round(ratio, 3);
      rows.push([name, round(a.reqPerS, 0), round(b.reqPerS, 0), round(a.p99Ms, 1), round(b.p99Ms, 1), round(ratio, 2)]);
    }
    for (const name of Object.keys(dayOne.sweepsMs)) {
      const ratio = year.sweepsMs[name]! / dayOne.sweepsMs[name]!;
      sweepRatios.push(ratio);
      metrics[`${key(name)}_cost_ratio`] = round(ratio, 3);
      rows.push([`${name} (ms)`, round(dayOne.sweepsMs[name]!, 2), round(year.sweepsMs[name]!, 2), null, null, round(ratio, 2)]);
    }
    const drainRatio = dayOne.drainJobsPerS / year.drainJobsPerS;
    ratios.push(drainRatio);
    metrics.drain_cost_ratio = round(drainRatio, 3);
    rows.push(['worker drain (jobs/s)', round(dayOne.drainJobsPerS, 0), round(year.drainJobsPerS, 0), null, null, round(drainRatio, 2)]);
    metrics.worst_cost_ratio = round(Math.max(...ratios), 3);
    metrics.worst_sweep_cost_ratio = round(Math.max(...sweepRatios), 3);
    return {
      id: '13',
      title: this.title,
      metrics,
      goals: [
        goal('worst ratio of a request or the drain, a year in ÷ day one', metrics.worst_cost_ratio as number, '<=', 1.2),
        goal('worst ratio of a sweep, a year in ÷ day one', metrics.worst_sweep_cost_ratio as number, '<=', 1.2),
        goal('Postgres CPU µs a poll', metrics.year_pg_poll_cpu_us as number, '<=', 50),
      ],
      table: { columns: ['request', 'day one req/s', 'a year in req/s', 'day one p99 ms', 'a year in p99 ms', 'cost ratio'], rows },
      notes: [
        `${settings.jobsPerDay} jobs a day; a year in: ${year.partitions} partitions of jobs, ${year.rows} rows; ` +
          `day one: ${dayOne.partitions}, ${dayOne.rows}.`,
        `Job view cache: ${viewCacheMs === undefined ? 'the API default' : `JOB_VIEW_CACHE_MS=${viewCacheMs}`}; polls go round 500 finished jobs.`,
        'Each side is a fresh API process over the filled schema; loads of ' +
          `${settings.durationS} s at ${CONNECTIONS} connections; sweeps are the median of ${settings.sweepRuns} calls from the bench process.`,
      ],
    };
  },
};
