import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdaptiveBatching, WorkerStatus } from '@inferq/contracts';
import { runLimited, startStack, waitFor, type Stack } from '@inferq/test-utils';

// `batching: "auto"` with a real worker: under a burst of CNN jobs the
// worker measures inference time per batch size, chooses a size and delay
// from that curve under the model's latency target, and shows both through
// GET /v1/workers.

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
  await stack.registerModel('cnn', { maxBatchSize: '64', maxBatchDelayMs: '20', batching: 'auto', latencyTargetMs: '250' });
  await stack.startWorker({ INTRA_OP_THREADS: '1' });
});
afterAll(() => stack?.close());

const image = (seed: number) => Buffer.from(Float32Array.from({ length: 3 * 32 * 32 }, (_, i) => Math.cos(seed * 3.1 + i * 0.37)).buffer).toString('base64');
const cnnJob = (seed: number) => ({ model: 'cnn', inputs: [{ name: 'image', datatype: 'FP32', shape: [1, 3, 32, 32], data: image(seed) }] });

const adaptiveState = async (): Promise<AdaptiveBatching | undefined> =>
  ((await stack.request('GET', '/v1/workers')).json.items as WorkerStatus[]).flatMap((w) => w.adaptiveBatching ?? []).find((a) => a.model === 'cnn');

describe('adaptive batching', () => {
  it('shows the bounds before any batch has run', async () => {
    const before = await waitFor(adaptiveState, { what: 'the worker to report the auto model' });
    expect(before).toMatchObject({ latencyTargetMs: 250, maxBatchSize: 64, itemsPerS: null, curve: [] });
  });

  it('measures sizes under load and chooses the size and delay from the curve, within the latency target', async () => {
    const ids = await runLimited(600, 64, async (i) => (await stack.request('POST', '/v1/jobs', cnnJob(i))).json.id as string);
    await waitFor(async () => (await stack.ctx.pool.query("SELECT count(*)::int AS n FROM jobs WHERE status = 'succeeded'")).rows[0].n === ids.length, {
      timeoutMs: 60_000,
      what: 'the burst to finish',
    });
    // The next heartbeat carries the state after the burst.
    const state = await waitFor(
      async () => {
        const s = await adaptiveState();
        return s && s.curve.length >= 2 ? s : undefined;
      },
      { timeoutMs: 10_000, what: 'a curve of two sizes or more' },
    );
    const curve = state.curve.map((p) => `${p.items}:${p.inferMs.toFixed(2)}ms×${p.samples}`).join(' ');
    console.log(`auto batching chose ${state.maxBatchSize} / ${state.maxBatchDelayMs} ms (${state.reason}); curve ${curve}`);
    expect(state.itemsPerS).toBeGreaterThan(0);
    expect(state.maxBatchSize).toBeGreaterThan(1);
    expect(state.maxBatchSize).toBeLessThanOrEqual(64);
    expect(state.maxBatchDelayMs).toBeLessThanOrEqual(20);
    // The choice keeps two runs of a batch of that size inside the target (the rule chooseBatching applies).
    const {
      rows: [sizes],
    } = await stack.ctx.pool.query<{ max: number }>("SELECT max(batch_size)::int AS max FROM jobs WHERE model_name = 'cnn'");
    expect(sizes!.max).toBeGreaterThan(1);
    const {
      rows: [p99],
    } = await stack.ctx.pool.query<{ ms: number }>("SELECT percentile_cont(0.99) WITHIN GROUP (ORDER BY queue_ms) AS ms FROM jobs WHERE model_name = 'cnn'");
    console.log(`queue wait p99 over the burst: ${Math.round(p99!.ms)} ms (600 jobs submitted at once: the backlog itself dominates it)`);
  });
});
