import {
  claimDueWebhooks,
  dropExpiredJobPartitions,
  ensureJobPartitions,
  expireOverdueJobs,
  findExpiredJobIds,
  findUnfinishedJobs,
  idRangeSql,
  listJobPartitions,
  liveJobIds,
  type Pool,
} from '@inferq/db';
import { ADMIN_KEY, fillYearOfJobs, makePastJobPartitions, waitFor, type Stack } from '@inferq/test-utils';
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
  /** Postgres CPU (every backend of the server) per poll of a finished job. */
  pgUsPerPoll: number | null;
  sweepsMs: Record<string, number>;
  drainJobsPerS: number;
}

/** Median ms of `runs` calls of `fn`. */
async function timed(runs: number, fn: () => Promise<unknown>): Promise<number> {
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
  const pool = stack.ctx.pool;
  await stack.registerModel('mlp');
  const owner = (await stack.request('GET', '/v1/me')).json.keyId as string;
  if (o.days > 7) await makePastJobPartitions(pool, o.days);
  await fillYearOfJobs(pool, { owner, days: o.days, jobsPerDay: o.jobsPerDay });
  // A fresh API process over the filled schema: what one finds after a restart a year in (the first one read the
  // partitions before the fill). Then Postgres forgets nothing but its plans, as after a deploy.
  await stack.api.stop();
  const { baseUrl } = await stack.startApi();
  const recent = (await pool.query<{ id: string }>(`SELECT id FROM jobs WHERE status = 'succeeded' ORDER BY created_at DESC LIMIT 500`)).rows;
  const prefix = recent[0]!.id.slice(0, 8);
  const load = (path: string, extra: Partial<Parameters<typeof runLoad>[0]> = {}) =>
    runLoad({ url: `${baseUrl}${path}`, headers: HEADERS, connections: CONNECTIONS, durationS: o.durationS, ...extra });

  const loads: Record<string, LoadResult> = {};
  loads['list'] = await load('/v1/jobs?limit=50');
  loads['list, status filter'] = await load('/v1/jobs?limit=50&status=failed');
  loads['search, error code'] = await load('/v1/jobs?limit=50&errorCode=INFERENCE_FAILED');
  loads['search, id prefix'] = await load(`/v1/jobs?limit=50&id=${prefix}`);
  loads['stats'] = await load('/v1/stats?windowMinutes=60');
  loads['usage'] = await load('/v1/usage?groupBy=model');
  const { postmasterPid } = await readPostgres(pool, false);
  const pgBefore = postmasterPid === null ? null : processTreeCpuSeconds(postmasterPid);
  loads['poll, finished job'] = await load('/v1/jobs/x', { paths: recent.map((r) => `/v1/jobs/${r.id}`) });
  const pgAfter = postmasterPid === null ? null : processTreeCpuSeconds(postmasterPid);
  const submitsBefore = (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs`)).rows[0]!.n;
  loads['submit'] = await load('/v1/jobs', {
    method: 'POST',
    headers: { ...HEADERS, 'content-type': 'application/json' },
    body: JSON.stringify(mlpJobBody('normal')),
  });
  const polls = loads['poll, finished job'].requests;

  const sweepsMs: Record<string, number> = {};
  for (const [name, sweep] of Object.entries(SWEEPS)) sweepsMs[name] = await timed(o.sweepRuns, () => sweep(pool));

  // The drain: the submits' jobs (and the few live ones the fill left, which the reconciler puts back), by one worker.
  const unfinished = async () =>
    (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE ${idRangeSql(await liveJobIds(pool))} AND status IN ('queued', 'running')`))
      .rows[0]!.n;
  const queued = await unfinished();
  const drainStart = performance.now();
  await stack.startWorker();
  await waitFor(async () => (await unfinished()) === 0, { timeoutMs: 600_000, intervalMs: 200, what: 'the drain' });
  const drainS = (performance.now() - drainStart) / 1000;
  return {
    partitions: (await listJobPartitions(pool)).length,
    rows: submitsBefore,
    loads,
    pgUsPerPoll: pgBefore !== null && pgAfter !== null && polls > 0 ? ((pgAfter - pgBefore) * 1e6) / polls : null,
    sweepsMs,
    drainJobsPerS: queued / drainS,
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
    const sides: Side[] = [];
    for (const d of [7, days]) {
      const stack = await ctx.startStack();
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
      day_one_pg_us_per_poll: round(dayOne.pgUsPerPoll, 0),
      year_pg_us_per_poll: round(year.pgUsPerPoll, 0),
    };
    const ratios: number[] = [];
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
      ratios.push(ratio);
      metrics[`${key(name)}_cost_ratio`] = round(ratio, 3);
      rows.push([`${name} (ms)`, round(dayOne.sweepsMs[name]!, 2), round(year.sweepsMs[name]!, 2), null, null, round(ratio, 2)]);
    }
    const drainRatio = dayOne.drainJobsPerS / year.drainJobsPerS;
    ratios.push(drainRatio);
    metrics.drain_cost_ratio = round(drainRatio, 3);
    rows.push(['worker drain (jobs/s)', round(dayOne.drainJobsPerS, 0), round(year.drainJobsPerS, 0), null, null, round(drainRatio, 2)]);
    metrics.worst_cost_ratio = round(Math.max(...ratios), 3);
    return {
      id: '13',
      title: this.title,
      metrics,
      goals: [
        goal('worst ratio, a year in ÷ day one', metrics.worst_cost_ratio as number, '<=', 1.2),
        goal('Postgres CPU µs a poll', metrics.year_pg_us_per_poll as number, '<=', 50),
      ],
      table: { columns: ['request', 'day one req/s', 'a year in req/s', 'day one p99 ms', 'a year in p99 ms', 'cost ratio'], rows },
      notes: [
        `${settings.jobsPerDay} jobs a day; a year in: ${year.partitions} partitions of jobs, ${year.rows} rows; day one: ${dayOne.partitions}, ${dayOne.rows}.`,
        'Each side is a fresh API process over the filled schema; loads of ' +
          `${settings.durationS} s at ${CONNECTIONS} connections; sweeps are the median of ${settings.sweepRuns} calls from the bench process.`,
      ],
    };
  },
};
