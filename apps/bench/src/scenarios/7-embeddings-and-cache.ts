import { ADMIN_KEY, demoModel } from '@inferq/test-utils';
import { base64Body, finishedSpan, SHIPPED_WORKER_ENV } from '../driver.ts';
import { runLoad } from '../load/autocannon.ts';
import { type Scenario } from '../scenario.ts';
import { round } from '../stats.ts';

/** Texts per embeddings request, each one job: 8 short sentences, 9 to 14 tokens (one padded shape, 16). */
const TEXTS = Array.from({ length: 8 }, (_, i) => `query ${i} about the quick brown fox and vector search ${i * 7}`);
const CONNECTIONS = 16;

export const embeddingsAndCache: Scenario = {
  id: '7',
  title: 'Embeddings and the response cache: /v1/embeddings on the demo encoder; a cache hit against a run of the MLP',
  async run(ctx) {
    const durationS = ctx.size(10, 1);
    const stack = await ctx.startStack();
    try {
      const encoder = demoModel('transformer');
      await stack.registerModel('encoder', { maxBatchSize: '64', maxBatchDelayMs: '5' }, 'transformer', encoder.tokenizerPath);
      await stack.registerModel('mlp', { maxBatchSize: '64', maxBatchDelayMs: '2' });
      await stack.registerModel('mlp-cached', { maxBatchSize: '64', maxBatchDelayMs: '2', responseCache: 'true' }, 'mlp');
      await stack.startWorker({ ...SHIPPED_WORKER_ENV, WORKER_MODELS: 'encoder,mlp,mlp-cached' });
      const headers = { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_KEY}` };
      const load = (path: string, body: unknown, extra: Record<string, string> = {}, seconds = durationS) =>
        runLoad({
          url: `${stack.baseUrl}${path}`,
          method: 'POST',
          headers: { ...headers, ...extra },
          body: JSON.stringify(body),
          connections: CONNECTIONS,
          durationS: seconds,
        });

      const embeddingsBody = { model: 'encoder', input: TEXTS, encoding_format: 'base64' };
      await load('/v1/embeddings', embeddingsBody, {}, 1);
      const embeddings = await load('/v1/embeddings', embeddingsBody);
      const encoderBatches = (await finishedSpan(stack.ctx.pool)).batchSizes;

      // The same one-row MLP job: run every time (no cache) or answered from the stored result (cache), both waited for.
      const mlpBody = (base64Body('mlp', 'features', [1, 64], new Float32Array(64).fill(0.25)) as () => { model: string })();
      const wait = { prefer: 'wait=10' };
      await load('/v1/jobs', { ...mlpBody, model: 'mlp-cached' }, wait, 1);
      const run = await load('/v1/jobs', mlpBody, wait);
      const hit = await load('/v1/jobs', { ...mlpBody, model: 'mlp-cached' }, wait);
      const avgBatch = encoderBatches.length ? encoderBatches.reduce((a, b) => a + b, 0) / encoderBatches.length : null;
      return {
        id: '7',
        title: this.title,
        metrics: {
          embedding_requests_per_s: round(embeddings.reqPerS, 1),
          embedding_texts_per_s: round(embeddings.reqPerS * TEXTS.length, 0),
          embedding_p50_ms: round(embeddings.p50Ms, 1),
          embedding_p99_ms: round(embeddings.p99Ms, 1),
          avg_batch_size_all_jobs: round(avgBatch, 1),
          run_jobs_per_s: round(run.reqPerS, 0),
          run_p50_ms: round(run.p50Ms, 2),
          cache_hit_jobs_per_s: round(hit.reqPerS, 0),
          cache_hit_p50_ms: round(hit.p50Ms, 2),
          cache_hit_p99_ms: round(hit.p99Ms, 2),
        },
        goals: [],
        notes: [
          `Closed loop, ${CONNECTIONS} connections, ${durationS} s each. Embeddings: ${TEXTS.length} texts per ` +
            `request (one job each) on the generated 2-layer encoder (dim 64), base64 replies.`,
          'Run vs hit: the same one-row MLP job with Prefer: wait=10, on a model without the cache (every job ' +
            'runs on the worker) and on one with it (every job after the first is answered from the stored result at submit).',
        ],
      };
    } finally {
      await stack.close();
    }
  },
};
