import { dropExpiredJobPartitions, ensureJobPartitions, utcDayStart, type DroppedJobPartition, type Pool } from '@inferq/db';
import { createRedisConnection } from '@inferq/queue';
import { ADMIN_KEY, mlpRows, startPrivatePostgres } from '@inferq/test-utils';
import { loadBenchEnv } from '../bench-env.ts';
import { SHIPPED_WORKER_ENV } from '../driver.ts';
import { p99ByWindow, startOpenLoop, type OpenLoop, type TimedReply } from '../load/open-loop.ts';
import { goal, type BenchContext, type Scenario, type ScenarioResult, type Series } from '../scenario.ts';
import { median, percentile, round, slope } from '../stats.ts';
import { createFootprintSampler, type Footprint } from '../storage/footprint.ts';
import { attachTombstoneDay } from '../storage/tombstone-day.ts';

const TITLE = 'Storage under retention: Postgres, S3 and Redis stay bounded at a steady load';
const DAY_MS = 86_400_000;
const MIB = 2 ** 20;
const SWEEP_INTERVAL_MS = 5_000;
/** Rows of the large MLP jobs: a 281,600-byte input and a 70,400-byte output, both above INLINE_TENSOR_MAX_BYTES (64 KiB): both go to S3. */
const LARGE_ROWS = 1_100;
/** One job in LARGE_EVERY is large; the others are one row (256 bytes in, 64 out, inline in Postgres and Redis). */
const LARGE_EVERY = 20;
const GETS_PER_S = 20;
const WINDOW_S = 10;
/** The mid-run drop and the BENCH_DROP_ROWS drop use days this far ahead: a fresh schema's jobs_legacy covers every day before (migration 0016). */
const MID_RUN_DAY = 30;
const BIG_DROP_DAY = 60;
/** Tables besides jobs' partitions reported on their own. */
const TABLES = ['job_idempotency', 'webhook_deliveries', 'batches', 'audit_log'];

/**
 * BENCH_RETENTION_DURATION_S, BENCH_RETENTION_S, BENCH_RETENTION_RATE, BENCH_DROP_ROWS (0: no big drop),
 * BENCH_RETENTION_POSTGRES (`private`: a Postgres of the scenario's own with the stock settings, autovacuum on, as a
 * deployment runs it; `shared`: the configured one, e.g. a CI server with autovacuum off); unset: the defaults.
 */
function settings(smoke: boolean) {
  const env = loadBenchEnv();
  const num = (name: string, fallback: number) => (env[name] ? Number(env[name]) : fallback);
  return {
    durationS: num('BENCH_RETENTION_DURATION_S', smoke ? 4 : 600),
    retentionS: num('BENCH_RETENTION_S', 120),
    ratePerS: num('BENCH_RETENTION_RATE', smoke ? 10 : 40),
    sampleEveryS: smoke ? 1 : 10,
    dayRows: smoke ? 500 : 200_000,
    dropRows: num('BENCH_DROP_ROWS', 0),
    privatePostgres: (env.BENCH_RETENTION_POSTGRES ?? 'private') === 'private',
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
const body = (rows: number) =>
  JSON.stringify({
    model: 'mlp',
    inputs: [{ name: 'features', datatype: 'FP32', shape: [rows, 64], data: Buffer.from(mlpRows(rows, 1).buffer).toString('base64') }],
  });
const HEADERS = { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' };

/** Submits at `ratePerS`, one large job in LARGE_EVERY; keeps the last accepted ids for GETs. */
function startSubmits(baseUrl: string, ratePerS: number, origin: number, recent: string[]): OpenLoop {
  const small = body(1);
  const large = body(LARGE_ROWS);
  return startOpenLoop({
    baseUrl,
    ratePerS,
    origin,
    headers: HEADERS,
    request: (i) => ({ method: 'POST', path: '/v1/jobs', body: i % LARGE_EVERY === LARGE_EVERY - 1 ? large : small }),
    onReply: (status, text) => {
      if (status !== 202) return;
      recent.push((JSON.parse(text) as { id: string }).id);
      if (recent.length > 200) recent.shift();
    },
  });
}

/** Runs `dropExpiredJobPartitions` for days before `olderThan`, as the partition maintainer does, on the run's clock. */
async function timedDrop(pool: Pool, olderThan: Date, clock: () => number) {
  const startMs = clock();
  const result = await dropExpiredJobPartitions(pool, { olderThan });
  return { startMs, endMs: clock(), dropped: result.dropped, skipped: result.skipped };
}

/** Replies in flight at some moment of [fromMs, toMs]. */
const overlapping = (replies: readonly TimedReply[], fromMs: number, toMs: number) => replies.filter((r) => r.sentMs <= toMs && r.sentMs + r.ms >= fromMs);
const maxMs = (replies: readonly TimedReply[]) => (replies.length === 0 ? null : Math.max(...replies.map((r) => r.ms)));

/** One series of the footprint over time (MiB), and its least-squares slope after `fromS`. */
function series(name: string, samples: Footprint[], value: (f: Footprint) => number, fromS: number) {
  const points = samples.map((f) => ({ x: f.atS, y: value(f) }));
  const steady = points.filter((p) => p.x >= fromS);
  const perS = slope(steady);
  return {
    name,
    points,
    atStart: steady[0]?.y ?? null,
    atEnd: steady.at(-1)?.y ?? null,
    perMin: perS === null ? null : perS * 60,
  };
}
type Line = ReturnType<typeof series>;
const toChart = (lines: Line[]): Series[] => lines.map((l) => ({ name: l.name, points: l.points.map((p) => ({ x: p.x, y: round(p.y / MIB, 2)! })) }));

/** The big drop (BENCH_DROP_ROWS): a day of `rows` tombstones, dropped while submits run; the drop's time and the slowest submit meanwhile. */
async function bigDrop(pool: Pool, baseUrl: string, ratePerS: number, rows: number, log: (line: string) => void) {
  const day = new Date(utcDayStart(new Date()).getTime() + BIG_DROP_DAY * DAY_MS);
  const filled = await attachTombstoneDay(pool, day, rows);
  log(`  ${rows} tombstones in ${filled.name}: filled in ${filled.fillMs} ms, attached in ${filled.attachMs} ms, ${Math.round(filled.bytes / MIB)} MiB`);
  const origin = performance.now();
  const clock = () => performance.now() - origin;
  const submits = startSubmits(baseUrl, ratePerS, origin, []);
  await sleep(10_000);
  const drop = await timedDrop(pool, new Date(day.getTime() + DAY_MS), clock);
  await sleep(10_000);
  const replies = await submits.stop();
  await ensureJobPartitions(pool, { aheadDays: 7 });
  const during = overlapping(replies, drop.startMs, drop.endMs);
  const before = replies.filter((r) => r.sentMs + r.ms < drop.startMs);
  const mine = drop.dropped.find((d) => d.name === filled.name);
  return {
    big_drop_rows: rows,
    big_drop_mib: round(filled.bytes / MIB, 0),
    big_drop_fill_s: round(filled.fillMs / 1000, 1),
    big_drop_attach_s: round(filled.attachMs / 1000, 1),
    big_drop_total_ms: round(drop.endMs - drop.startMs, 0),
    big_drop_detach_ms: mine?.detachMs ?? null,
    big_drop_drop_ms: mine?.dropMs ?? null,
    big_drop_submits_during: during.length,
    big_drop_submit_max_ms_during: round(maxMs(during), 1),
    big_drop_submit_p99_ms_before: round(
      percentile(
        before.map((r) => r.ms),
        99,
      ),
      1,
    ),
    big_drop_submit_max_ms_before: round(maxMs(before), 1),
    big_drop_submit_errors: replies.filter((r) => r.status !== 202).length,
  };
}

/** The steady run on `services` (the stack's Postgres when set), then the big drop when asked for. */
async function measure(ctx: BenchContext, s: ReturnType<typeof settings>, services: Record<string, string> | undefined): Promise<ScenarioResult> {
  const stack = await ctx.startStack(
    {
      JOB_RETENTION_S: String(s.retentionS),
      JOB_INPUT_RETENTION_S: String(Math.floor(s.retentionS / 2)),
      RETENTION_SWEEP_INTERVAL_MS: String(SWEEP_INTERVAL_MS),
    },
    services,
  );
  const { pool } = stack.ctx;
  const redis = createRedisConnection(stack.ctx.env.REDIS_URL!, 'consumer');
  const sampler = createFootprintSampler({ pool, redis, prefix: stack.ctx.prefix, s3Env: stack.ctx.env });
  try {
    await stack.registerModel('mlp', { maxBatchSize: '32', maxBatchDelayMs: '2' });
    await stack.startWorker({ ...SHIPPED_WORKER_ENV, INTRA_OP_THREADS: '1' });
    const midDay = new Date(utcDayStart(new Date()).getTime() + MID_RUN_DAY * DAY_MS);
    const day = await attachTombstoneDay(pool, midDay, s.dayRows);
    ctx.log(`  ${s.dayRows} tombstones in ${day.name} (${Math.round(day.bytes / MIB)} MiB) for the mid-run drop`);

    const origin = performance.now();
    const clock = () => performance.now() - origin;
    const recent: string[] = [];
    const submits = startSubmits(stack.baseUrl, s.ratePerS, origin, recent);
    const gets = startOpenLoop({
      baseUrl: stack.baseUrl,
      ratePerS: GETS_PER_S,
      origin,
      headers: HEADERS,
      request: (i) => (recent.length === 0 ? undefined : { method: 'GET', path: `/v1/jobs/${recent[i % recent.length]}` }),
    });
    const samples: Footprint[] = [];
    let drop: Awaited<ReturnType<typeof timedDrop>> | undefined;
    const dropAtS = s.durationS / 2;
    for (let t = 0; t <= s.durationS; t += s.sampleEveryS) {
      await sleep(t * 1000 - clock());
      if (!drop && t >= dropAtS) {
        drop = await timedDrop(pool, new Date(midDay.getTime() + DAY_MS), clock);
        // The maintainer's pass creates the days ahead first; a drop this far ahead also takes those, so they come back.
        await ensureJobPartitions(pool, { aheadDays: 7 });
      }
      samples.push(await sampler.sample(round(clock() / 1000, 1)!));
    }
    const submitted = await submits.stop();
    const got = await gets.stop();

    const { rows: counts } = await pool.query<{ jobs: number; finished: number; purged: number; dropped_inputs: number }>(
      `SELECT count(*)::int AS jobs, count(*) FILTER (WHERE finished_at IS NOT NULL)::int AS finished,
                count(*) FILTER (WHERE purged_at IS NOT NULL)::int AS purged, count(*) FILTER (WHERE inputs_dropped_at IS NOT NULL)::int AS dropped_inputs
           FROM jobs`,
    );
    const { rows: pg } = await pool.query<{ version: string; autovacuum: string }>(
      `SELECT current_setting('server_version') AS version, current_setting('autovacuum') AS autovacuum`,
    );
    const server = `${pg[0]!.version}, autovacuum ${pg[0]!.autovacuum}`;
    const big = s.dropRows > 0 ? await bigDrop(pool, stack.baseUrl, s.ratePerS, s.dropRows, ctx.log) : {};

    // Steady state: from one retention period and one sweep in, when the first jobs have been purged.
    const fromS = s.retentionS + SWEEP_INTERVAL_MS / 1000;
    const jobsBytes = (f: Footprint) => f.jobPartitions.filter((p) => p !== day.name).reduce((n, p) => n + f.tableBytes[p]!, 0);
    const postgres = [
      series('jobs (partitions but the dropped day)', samples, jobsBytes, fromS),
      ...TABLES.map((t) => series(t, samples, (f) => f.tableBytes[t] ?? 0, fromS)),
    ];
    const others = [
      series('S3 bucket', samples, (f) => f.s3Bytes, fromS),
      series('Redis keys under the prefix', samples, (f) => f.redisPrefixBytes, fromS),
      series('Redis used_memory (server)', samples, (f) => f.redisUsedBytes, fromS),
    ];
    const jobsPerMin = (submitted.length / s.durationS) * 60;
    const rows = [...postgres, ...others].map((l) => [
      l.name,
      round(l.atStart === null ? null : l.atStart / MIB, 2),
      round(l.atEnd === null ? null : l.atEnd / MIB, 2),
      round(l.perMin === null ? null : l.perMin / 1024, 1),
      round(l.perMin === null ? null : l.perMin / jobsPerMin, 0),
    ]);
    const jobsPartitions = samples.at(-1)!.jobPartitions.filter((p) => p !== day.name);
    const deadJobs = (f: Footprint) => jobsPartitions.reduce((n, p) => n + (f.deadTuples[p] ?? 0), 0);
    const liveJobs = (f: Footprint) => jobsPartitions.reduce((n, p) => n + (f.liveTuples[p] ?? 0), 0);

    const submitWindows = p99ByWindow(submitted, WINDOW_S);
    const getWindows = p99ByWindow(got, WINDOW_S);
    const dropWindow = drop ? Math.floor(drop.startMs / 1000 / WINDOW_S) * WINDOW_S : null;
    const inDrop = (w: { startS: number }) => w.startS === dropWindow;
    const otherP99 = (ws: typeof submitWindows) => ws.filter((w) => !inDrop(w) && w.p99Ms !== null).map((w) => w.p99Ms!);
    const submitOther = otherP99(submitWindows);
    const getOther = otherP99(getWindows);
    const submitDropP99 = submitWindows.find(inDrop)?.p99Ms ?? null;
    const dropped: DroppedJobPartition | undefined = drop?.dropped.find((d) => d.name === day.name);
    const s3 = others[0]!;
    const s3Share = s3.perMin === null || !s3.atEnd ? null : round((100 * s3.perMin) / s3.atEnd, 2);
    const redisOwn = others[1]!;
    const redisShare = redisOwn.perMin === null || !redisOwn.atEnd ? null : round((100 * redisOwn.perMin) / redisOwn.atEnd, 2);
    const ratio = submitDropP99 !== null && submitOther.length > 0 ? round(submitDropP99 / median(submitOther), 2) : null;
    const last = samples.at(-1)!;

    return {
      id: '12',
      title: TITLE,
      metrics: {
        duration_s: s.durationS,
        retention_s: s.retentionS,
        input_retention_s: Math.floor(s.retentionS / 2),
        offered_jobs_per_s: s.ratePerS,
        submitted: submitted.length,
        submitted_per_s: round(submitted.length / s.durationS, 1),
        submit_errors: submitted.filter((r) => r.status !== 202).length,
        gets: got.length,
        get_errors: got.filter((r) => r.status !== 200).length,
        jobs_rows_end: counts[0]!.jobs,
        jobs_finished_end: counts[0]!.finished,
        jobs_purged_end: counts[0]!.purged,
        jobs_inputs_dropped_end: counts[0]!.dropped_inputs,
        postgres: `${s.privatePostgres ? 'private' : 'shared'} ${server}`,
        jobs_autovacuums_end: jobsPartitions.reduce((n, p) => n + (last.autovacuums[p] ?? 0), 0),
        jobs_dead_tuples_end: deadJobs(last),
        jobs_live_tuples_end: liveJobs(last),
        s3_objects_end: last.s3Objects,
        redis_prefix_keys_end: last.redisPrefixKeys,
        jobs_bytes_per_min: round(postgres[0]!.perMin, 0),
        s3_bytes_per_min: round(s3.perMin, 0),
        s3_growth_percent_per_min: s3Share,
        redis_prefix_bytes_per_min: round(redisOwn.perMin, 0),
        redis_used_bytes_per_min: round(others[2]!.perMin, 0),
        mid_run_drop_rows: s.dayRows,
        mid_run_drop_mib: round(day.bytes / MIB, 1),
        mid_run_drop_at_s: drop ? round(drop.startMs / 1000, 1) : null,
        mid_run_drop_total_ms: drop ? round(drop.endMs - drop.startMs, 0) : null,
        mid_run_drop_detach_ms: dropped?.detachMs ?? null,
        mid_run_drop_drop_ms: dropped?.dropMs ?? null,
        mid_run_dropped_partitions: drop?.dropped.map((d) => d.name).join(' ') || null,
        submit_p99_ms: round(
          percentile(
            submitted.map((r) => r.ms),
            99,
          ),
          1,
        ),
        get_p99_ms: round(
          percentile(
            got.map((r) => r.ms),
            99,
          ),
          1,
        ),
        submit_p99_ms_drop_window: round(submitDropP99, 1),
        submit_p99_ms_other_windows_median: submitOther.length ? round(median(submitOther), 1) : null,
        submit_p99_ms_other_windows_max: submitOther.length ? round(Math.max(...submitOther), 1) : null,
        get_p99_ms_drop_window: round(getWindows.find(inDrop)?.p99Ms ?? null, 1),
        get_p99_ms_other_windows_median: getOther.length ? round(median(getOther), 1) : null,
        get_p99_ms_other_windows_max: getOther.length ? round(Math.max(...getOther), 1) : null,
        submit_max_ms_during_drop: drop ? round(maxMs(overlapping(submitted, drop.startMs, drop.endMs)), 1) : null,
        ...big,
      },
      goals: [
        goal('S3 bytes, growth per minute after the first retention, % of the level', s3Share, '<=', 2, '%'),
        goal("Redis (the stack's keys), growth per minute after the first retention, % of the level", redisShare, '<=', 2, '%'),
        goal('submit p99 in the window of the partition drop ÷ median window p99', ratio, '<=', 2),
        // A run shorter than a retention period has no steady state to judge (the BENCH_DROP_ROWS run, the smoke run).
      ].filter((g) => g.value !== null),
      table: {
        columns: ['series', `MiB at ${Math.round(fromS)} s`, 'MiB at the end', 'slope KiB/min', 'slope ÷ jobs submitted (bytes/job)'],
        rows,
      },
      charts: [
        { file: '12-postgres', title: 'Storage under retention: Postgres tables (MiB)', xLabel: 'seconds', yLabel: 'MiB', series: toChart(postgres) },
        { file: '12-s3-redis', title: 'Storage under retention: S3 and Redis (MiB)', xLabel: 'seconds', yLabel: 'MiB', series: toChart(others) },
        {
          file: '12-latency',
          title: `p99 per ${WINDOW_S} s window (partition drop at ${drop ? Math.round(drop.startMs / 1000) : '—'} s)`,
          xLabel: 'seconds',
          yLabel: 'ms',
          series: [
            { name: 'submit p99', points: submitWindows.map((w) => ({ x: w.startS, y: round(w.p99Ms, 1) ?? 0 })) },
            { name: 'GET p99', points: getWindows.map((w) => ({ x: w.startS, y: round(w.p99Ms, 1) ?? 0 })) },
            { name: 'dead tuples in jobs (÷100)', points: samples.map((f) => ({ x: f.atS, y: deadJobs(f) / 100 })) },
          ],
        },
      ],
      notes: [
        `${s.ratePerS} submissions/s for ${s.durationS} s, open loop, one worker: ${LARGE_EVERY - 1} in ${LARGE_EVERY} one-row MLP jobs ` +
          `(inline), 1 in ${LARGE_EVERY} of ${LARGE_ROWS} rows (input ${LARGE_ROWS * 256} bytes, output ${LARGE_ROWS * 64}: both to S3). ` +
          `${GETS_PER_S} GET /v1/jobs/:id per s on the last 200 accepted jobs.`,
        `API: JOB_RETENTION_S ${s.retentionS}, JOB_INPUT_RETENTION_S ${Math.floor(s.retentionS / 2)}, RETENTION_SWEEP_INTERVAL_MS ${SWEEP_INTERVAL_MS}. ` +
          `Every ${s.sampleEveryS} s: pg_total_relation_size (heap, TOAST, indexes) of each table and partition, the bucket's objects ` +
          '(ListObjectsV2, sizes summed), Redis used_memory (the whole server, shared with other users) and MEMORY USAGE summed over the ' +
          "stack's own keys. Slopes: least squares over the samples from one retention period and one sweep in.",
        `Mid-run drop: before the load, a day ${MID_RUN_DAY} days ahead (a fresh schema's jobs_legacy covers the days before) filled with ` +
          `${s.dayRows} tombstones and attached; at ${dropAtS} s it is dropped by dropExpiredJobPartitions (the maintainer's path: deliveries ` +
          'and idempotency rows by id range, DETACH CONCURRENTLY, DROP). Its bytes are left out of the jobs series.',
        'Tombstones stay until their day is dropped (JOB_TOMBSTONE_RETENTION_S, at least a day), so within a run the jobs partitions grow ' +
          'by one tombstone per job: the jobs slope ÷ jobs submitted is the size of a tombstone with its index entries.',
        ...(s.dropRows > 0
          ? [
              `Big drop (BENCH_DROP_ROWS=${s.dropRows}): a day ${BIG_DROP_DAY} days ahead filled with that many tombstones (a plain table, ` +
                'then ATTACH), then submits at the same rate, and after 10 s the day dropped the same way; the slowest submit in flight ' +
                'during the drop against those of the 10 s before.',
            ]
          : []),
      ],
    };
  } finally {
    sampler.close();
    redis.disconnect();
    await stack.close();
  }
}

export const storageRetention: Scenario = {
  id: '12',
  title: TITLE,
  async run(ctx) {
    const s = settings(ctx.smoke);
    const postgres = s.privatePostgres ? await startPrivatePostgres() : undefined;
    try {
      return await measure(ctx, s, postgres?.env);
    } finally {
      await postgres?.close();
    }
  },
};
