import { ADMIN_KEY, requiredTestVar } from '@inferq/test-utils';
import { startBareFastify } from '../ceilings/bare-fastify.ts';
import { mlpJobBody } from '../driver.ts';
import { runLoad, type LoadResult } from '../load/autocannon.ts';
import { goal, type Scenario } from '../scenario.ts';
import { round } from '../stats.ts';

const CONNECTIONS = 100;

export const submitLatency: Scenario = {
  id: '3',
  title: 'Submit latency: POST /v1/jobs against a bare Fastify route doing one BullMQ add',
  async run(ctx) {
    const durationS = ctx.size(10, 2);
    const warmupS = ctx.size(2, 1);
    const body = JSON.stringify(mlpJobBody('normal'));
    /** Warm-up (JIT, connection pools), then the measured run. */
    const measure = async (url: string, headers: Record<string, string>): Promise<LoadResult> => {
      const load = { url, method: 'POST' as const, headers: { 'content-type': 'application/json', ...headers }, body, connections: CONNECTIONS };
      await runLoad({ ...load, durationS: warmupS });
      return runLoad({ ...load, durationS });
    };

    const bareFastify = await startBareFastify(requiredTestVar('REDIS_URL'));
    let bare: LoadResult;
    try {
      bare = await measure(bareFastify.submitUrl, {});
    } finally {
      await bareFastify.close();
    }
    const stack = await ctx.startStack();
    let api: LoadResult;
    try {
      await stack.registerModel('mlp');
      api = await measure(`${stack.baseUrl}/v1/jobs`, { authorization: `Bearer ${ADMIN_KEY}` });
    } finally {
      await stack.close();
    }

    const ratio = api.reqPerS / bare.reqPerS;
    return {
      id: '3',
      title: this.title,
      metrics: {
        connections: CONNECTIONS,
        duration_s: durationS,
        api_req_per_s: round(api.reqPerS, 0),
        api_p50_ms: round(api.p50Ms, 1),
        api_p99_ms: round(api.p99Ms, 1),
        bare_req_per_s: round(bare.reqPerS, 0),
        bare_p50_ms: round(bare.p50Ms, 1),
        bare_p99_ms: round(bare.p99Ms, 1),
        api_to_bare_ratio: round(ratio, 3),
      },
      goals: [
        goal('POST /v1/jobs ÷ bare route, req/s', round(ratio, 3), '>=', 0.5),
        goal('POST /v1/jobs p99', round(api.p99Ms, 1), '<=', 25, 'ms'),
      ],
      notes: [
        `autocannon from the bench process, ${CONNECTIONS} connections, ${warmupS} s warm-up then ${durationS} s measured per side; body: one MLP job, [1, 64] FP32 as base64, priority normal; no worker runs, so the queue grows.`,
        'A 202 from the API means the job row is committed in Postgres and its queue job added (group commit).',
        'Bare: Fastify in its own process parsing the same body and doing one BullMQ add (own prefix, inferq job options) on the same Redis; no auth, validation or Postgres.',
      ],
    };
  },
};
