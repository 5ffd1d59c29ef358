import { ADMIN_KEY, requiredTestVar } from '@inferq/test-utils';
import { startBareFastify } from '../ceilings/bare-fastify.ts';
import { mlpJobBody } from '../driver.ts';
import { runLoad, type LoadResult } from '../load/autocannon.ts';
import { goal, type Scenario } from '../scenario.ts';
import { median, round } from '../stats.ts';

const CONNECTIONS = 100;

/** The run with the median req/s; on a shared 2-core box one run alone swings by a fifth. */
const medianRun = (runs: LoadResult[]): LoadResult => [...runs].sort((a, b) => a.reqPerS - b.reqPerS)[Math.floor(runs.length / 2)]!;

export const submitLatency: Scenario = {
  id: '3',
  title: 'Submit latency: POST /v1/jobs against a bare Fastify route doing one BullMQ add',
  async run(ctx) {
    const rounds = ctx.size(3, 1);
    const durationS = ctx.size(5, 1);
    const body = JSON.stringify(mlpJobBody('normal'));
    const load = (url: string, headers: Record<string, string>, seconds: number) =>
      runLoad({ url, method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, connections: CONNECTIONS, durationS: seconds });

    const bareFastify = await startBareFastify(requiredTestVar('REDIS_URL'));
    const stack = await ctx.startStack();
    const bare: LoadResult[] = [];
    const api: LoadResult[] = [];
    try {
      await stack.registerModel('mlp');
      const apiUrl = `${stack.baseUrl}/v1/jobs`;
      const auth = { authorization: `Bearer ${ADMIN_KEY}` };
      // Warm-up (JIT, connection pools), then the sides alternate so drift on the machine hits both alike.
      await load(bareFastify.submitUrl, {}, 1);
      await load(apiUrl, auth, 1);
      for (let i = 0; i < rounds; i++) {
        bare.push(await load(bareFastify.submitUrl, {}, durationS));
        api.push(await load(apiUrl, auth, durationS));
      }
    } finally {
      await Promise.all([stack.close(), bareFastify.close()]);
    }

    const a = medianRun(api);
    const b = medianRun(bare);
    const ratio = a.reqPerS / b.reqPerS;
    const apiP99 = median(api.map((r) => r.p99Ms!));
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
        api_req_per_s_rounds: api.map((r) => Math.round(r.reqPerS)).join(' / '),
        bare_req_per_s_rounds: bare.map((r) => Math.round(r.reqPerS)).join(' / '),
      },
      goals: [goal('POST /v1/jobs ÷ bare route, req/s', round(ratio, 3), '>=', 0.5), goal('POST /v1/jobs p99', round(apiP99, 1), '<=', 25, 'ms')],
      notes: [
        `autocannon from the bench process, ${CONNECTIONS} connections; after 1 s of warm-up each, ${rounds} ` +
          `rounds of ${durationS} s alternating bare and API; figures are the median round (p99: the median of ` +
          `the rounds' p99). Body: one MLP job, [1, 64] FP32 as base64, priority normal; no worker runs, so the queue grows.`,
        'A 202 from the API means the job row is committed in Postgres and its queue job added (group commit).',
        'Bare: Fastify in its own process parsing the same body and doing one BullMQ add (own prefix, inferq ' +
          'job options) on the same Redis; no auth, validation or Postgres.',
      ],
    };
  },
};
