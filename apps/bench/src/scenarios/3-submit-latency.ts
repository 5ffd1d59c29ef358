import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_KEY, requiredTestVar, type Stack } from '@inferq/test-utils';
import { startBareFastify } from '../ceilings/bare-fastify.ts';
import { BODY_FORMS, mlpJobBody, wireBody, type BodyForm, type EncodedBody } from '../driver.ts';
import { runLoad, type LoadResult } from '../load/autocannon.ts';
import { cpuMsPerMiB, cpuStopwatch } from '../costs/process-cpu.ts';
import { monotonicMicros, readMainThreadProfile, stageShares, SUBMIT_STAGES } from '../costs/cpu-profile-stages.ts';
import { meterTiers, type TierCosts } from '../costs/tier-costs.ts';
import { meterStack } from '../driver.ts';
import { goalOverRuns, type BenchContext, type Scenario, type ScenarioResult } from '../scenario.ts';
import { median, round } from '../stats.ts';

const CONNECTIONS = 100;

/** POSTs `body` to `url` from CONNECTIONS connections for `seconds`. */
const load = (url: string, headers: Record<string, string>, body: EncodedBody, seconds: number): Promise<LoadResult> =>
  runLoad({ url, method: 'POST', headers: { ...body.headers, ...headers }, body: body.bytes, connections: CONNECTIONS, durationS: seconds });

/** A load run and what its requests cost, tier by tier. */
type CostedLoad = LoadResult & { costs: TierCosts };

/** The run with the median req/s; on a shared 2-core box one run alone swings by a fifth. */
const medianRun = (runs: CostedLoad[]): CostedLoad => [...runs].sort((a, b) => a.reqPerS - b.reqPerS)[Math.floor(runs.length / 2)]!;

/** Runs `run` between two readings of the tiers `meter` reads. */
async function costed(meter: () => Promise<{ stop(jobs: number): Promise<TierCosts> }>, run: () => Promise<LoadResult>): Promise<CostedLoad> {
  const m = await meter();
  const r = await run();
  return { ...r, costs: await m.stop(r.requests) };
}

/**
 * One more JSON round against an API and a bare route that run under `node --cpu-prof` (their own processes, so the
 * measured rounds carry no profiler): where each one's CPU per request goes, stage by stage, over the load's span only.
 */
async function profiledRound(
  ctx: BenchContext,
  body: EncodedBody,
  seconds: number,
  /** CPU µs per request of each side in the measured rounds, which the shares divide. */
  measured: { api: number | null; bare: number | null },
): Promise<NonNullable<ScenarioResult['table']>> {
  const dir = await mkdtemp(join(tmpdir(), 'inferq-bench-profile-'));
  const profiling = (side: string) => ['--cpu-prof', `--cpu-prof-dir=${join(dir, side)}`];
  const perRequest = (side: 'api' | 'bare', share: number) => (measured[side] === null ? null : round(share * measured[side], 1));
  /** A full round of warm-up (after 1 s only, the profiled API ran at 1.75 times its measured CPU), then the measured one. */
  const measureSide = async (url: string, headers: Record<string, string>, pid: number | undefined) => {
    await load(url, headers, body, seconds);
    const fromUs = monotonicMicros();
    const cpu = cpuStopwatch(pid);
    const r = await load(url, headers, body, seconds);
    return { fromUs, toUs: monotonicMicros(), cpuUsPerReq: ((cpu.stop() ?? NaN) * 1e6) / r.requests };
  };
  try {
    const bare = await startBareFastify(requiredTestVar('REDIS_URL'), profiling('bare'));
    let stack: Stack | undefined;
    let spans: Record<'api' | 'bare', Awaited<ReturnType<typeof measureSide>>>;
    try {
      stack = await ctx.startStack(undefined, undefined, profiling('api'));
      await stack.registerModel('mlp');
      spans = {
        api: await measureSide(`${stack.baseUrl}/v1/jobs`, { authorization: `Bearer ${ADMIN_KEY}` }, stack.api.child.pid),
        bare: await measureSide(bare.submitUrl, {}, bare.pid),
      };
    } finally {
      // Both write their profiles as they exit.
      await Promise.all([stack?.close(), bare.close()]);
    }
    const shares = {
      api: stageShares(await readMainThreadProfile(join(dir, 'api')), SUBMIT_STAGES, spans.api),
      bare: stageShares(await readMainThreadProfile(join(dir, 'bare')), SUBMIT_STAGES, spans.bare),
    };
    const percent = (share: number) => `${round(share * 100, 1)} %`;
    return {
      columns: ['stage (profiled round)', 'API: share of CPU', 'API: µs per request', 'bare route: share', 'bare route: µs per request'],
      rows: [
        ...shares.api.map(({ stage, share }, i) => {
          const bareShare = shares.bare[i]!.share;
          return [stage, percent(share), perRequest('api', share), percent(bareShare), perRequest('bare', bareShare)];
        }),
        ['all: the measured rounds (median)', '100 %', perRequest('api', 1), '100 %', perRequest('bare', 1)],
        ['all: the profiled round itself', '', round(spans.api.cpuUsPerReq, 1), '', round(spans.bare.cpuUsPerReq, 1)],
      ],
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export const submitLatency: Scenario = {
  id: '3',
  title: 'Submit latency: POST /v1/jobs against a bare Fastify route doing one BullMQ add',
  async run(ctx) {
    const rounds = ctx.size(3, 1);
    const durationS = ctx.size(5, 1);
    const bodies = Object.fromEntries(BODY_FORMS.map((f) => [f, wireBody(mlpJobBody('normal', f))])) as Record<BodyForm, EncodedBody>;

    const bareFastify = await startBareFastify(requiredTestVar('REDIS_URL'));
    const stack = await ctx.startStack();
    const bare: CostedLoad[] = [];
    const api: CostedLoad[] = [];
    const binary: CostedLoad[] = [];
    const meterBare = () => meterTiers({ apiPids: [bareFastify.pid], redisUrl: requiredTestVar('REDIS_URL') });
    /** Per binary round: API CPU ms per MiB of bodies received. */
    const cpu: Record<BodyForm, Array<number | null>> = { json: [], binary: [] };
    try {
      await stack.registerModel('mlp');
      const apiUrl = `${stack.baseUrl}/v1/jobs`;
      const auth = { authorization: `Bearer ${ADMIN_KEY}` };
      const loadApi = async (form: BodyForm, seconds: number): Promise<CostedLoad> => {
        const stopwatch = cpuStopwatch(stack.api.child.pid);
        const r = await costed(
          () => meterStack(stack),
          () => load(apiUrl, auth, bodies[form], seconds),
        );
        cpu[form].push(cpuMsPerMiB(stopwatch.stop(), r.requests * bodies[form].bytes.byteLength));
        return r;
      };
      // Warm-up (JIT, connection pools), then the sides alternate so drift on the machine hits all alike.
      await load(bareFastify.submitUrl, {}, bodies.json, 1);
      for (const form of BODY_FORMS) await loadApi(form, 1);
      cpu.json.length = cpu.binary.length = 0;
      for (let i = 0; i < rounds; i++) {
        bare.push(await costed(meterBare, () => load(bareFastify.submitUrl, {}, bodies.json, durationS)));
        api.push(await loadApi('json', durationS));
        binary.push(await loadApi('binary', durationS));
      }
    } finally {
      await Promise.all([stack.close(), bareFastify.close()]);
    }

    const a = medianRun(api);
    const b = medianRun(bare);
    const stages = await profiledRound(ctx, bodies.json, durationS, { api: a.costs.cpuUsPerJob.api, bare: b.costs.cpuUsPerJob.api });
    const bin = medianRun(binary);
    const ratio = a.reqPerS / b.reqPerS;
    const apiP99 = median(api.map((r) => r.p99Ms!));
    const binaryP99 = median(binary.map((r) => r.p99Ms!));
    const cpuFigure = (form: BodyForm) => {
      const values = cpu[form].filter((v) => v !== null);
      return values.length === 0 ? null : round(median(values), 1);
    };
    return {
      id: '3',
      title: this.title,
      metrics: {
        connections: CONNECTIONS,
        rounds,
        duration_s: durationS,
        api_req_per_s: round(a.reqPerS, 0),
        api_p50_ms: round(a.p50Ms, 1),
        api_p99_ms: round(apiP99, 1),
        bare_req_per_s: round(b.reqPerS, 0),
        bare_p50_ms: round(b.p50Ms, 1),
        bare_p99_ms: round(median(bare.map((r) => r.p99Ms!)), 1),
        api_to_bare_ratio: round(ratio, 3),
        api_cpu_ms_per_mib: cpuFigure('json'),
        binary_req_per_s: round(bin.reqPerS, 0),
        binary_p50_ms: round(bin.p50Ms, 1),
        binary_p99_ms: round(binaryP99, 1),
        binary_to_bare_ratio: round(bin.reqPerS / b.reqPerS, 3),
        binary_api_cpu_ms_per_mib: cpuFigure('binary'),
        api_req_per_s_rounds: api.map((r) => Math.round(r.reqPerS)).join(' / '),
        api_cpu_us_per_job: round(a.costs.cpuUsPerJob.api, 1),
        bare_cpu_us_per_job: round(b.costs.cpuUsPerJob.api, 1),
        redis_cmds_per_job: round(a.costs.redisCmdsPerJob, 2),
        bare_redis_cmds_per_job: round(b.costs.redisCmdsPerJob, 2),
        binary_req_per_s_rounds: binary.map((r) => Math.round(r.reqPerS)).join(' / '),
        bare_req_per_s_rounds: bare.map((r) => Math.round(r.reqPerS)).join(' / '),
      },
      table: stages,
      costs: [
        { name: 'POST /v1/jobs (JSON)', costs: a.costs, measuredJobsPerS: round(a.reqPerS, 0) },
        { name: 'POST /v1/jobs (binary)', costs: bin.costs, measuredJobsPerS: round(bin.reqPerS, 0) },
        { name: 'bare Fastify + BullMQ add', costs: b.costs, measuredJobsPerS: round(b.reqPerS, 0), ceiling: true },
      ],
      // Over the rounds: each round's API ÷ the bare route's of the same round (they alternate), and each round's p99.
      goals: [
        goalOverRuns(
          'POST /v1/jobs ÷ bare route, req/s',
          api.map((r, i) => r.reqPerS / bare[i]!.reqPerS),
          '>=',
          0.5,
        ),
        goalOverRuns(
          'POST /v1/jobs p99',
          api.map((r) => r.p99Ms),
          '<=',
          25,
          'ms',
          1,
        ),
      ],
      notes: [
        `autocannon from the bench process, ${CONNECTIONS} connections; after 1 s of warm-up each, ${rounds} ` +
          `rounds of ${durationS} s alternating bare and API; figures are the median round (p99: the median of ` +
          `the rounds' p99); the goals read each round (the ratio a round's API over the same round's bare route) ` +
          `with their range. Body: one MLP job, [1, 64] FP32 as base64, priority normal; no worker runs, so the queue grows.`,
        `binary_*: the same job as a framed body (${bodies.binary.bytes.byteLength} bytes: the JSON header, then the 256 raw bytes; ` +
          `JSON: ${bodies.json.bytes.byteLength} bytes), a third side in each round. API CPU: user + system time of the API ` +
          'process (/proc/<pid>/stat) over each round, per MiB of request bodies answered.',
        'A 202 from the API means the job row is committed in Postgres and its queue job added (group commit).',
        "Tier costs per answered request over each round, the median round's: the API (or the bare route's process) as the " +
          'api tier, no worker (the queue grows), autocannon in the bench process as the load generator.',
        'Bare: Fastify in its own process parsing the same body and doing one BullMQ add (own prefix, inferq ' +
          'job options) on the same Redis; no auth, validation or Postgres.',
        'The table: one more JSON round of each after the measured ones, against a fresh API and bare route run under ' +
          '`node --cpu-prof`, each warmed up for a full round first; the profile gives the shares only. Each ' +
          "sample's time goes to the first stage in the table's order that a frame of its stack belongs to " +
          '(apps/bench/src/costs/cpu-profile-stages.ts), idle time left out; µs per request = share × the CPU per ' +
          "request of the measured rounds' median (the profiled round's own is the last row: the profiler's cost shows " +
          'there). The API runs from its TypeScript sources (tsx), as in the rounds above.',
      ],
    };
  },
};
