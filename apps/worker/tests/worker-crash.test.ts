import { Queue } from 'bullmq';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoModel, runLimited, type Stack, startStack, waitFor } from '@inferq/test-utils';

/** Enough batches that the kill lands mid-run even on a fast machine. */
const JOBS = 480;
let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
  // Big, slow batches of the CNN so the kill lands while one is running.
  await stack.registerModel('cnn', { maxBatchSize: '16', maxBatchDelayMs: '50' });
});
afterAll(() => stack?.close());

const image = (seed: number) => Float32Array.from({ length: 3 * 32 * 32 }, (_, i) => Math.cos(seed * 3.1 + i * 0.37));

describe('a worker killed with SIGKILL mid-batch', () => {
  it('loses nothing: after a new worker starts, every job completes exactly once with the right output', async () => {
    const ids = await runLimited(JOBS, 32, async (i) => {
      const res = await stack.request('POST', '/v1/jobs', { model: 'cnn', inputs: [{ name: 'image', datatype: 'FP32', shape: [1, 3, 32, 32], data: Buffer.from(image(i).buffer).toString('base64') }] });
      expect(res.status).toBe(202);
      return res.json.id as string;
    });
    const first = await stack.startWorker({ INTRA_OP_THREADS: '1' });
    await waitFor(async () => (await stack.ctx.pool.query("SELECT 1 FROM jobs WHERE status = 'running'")).rowCount, { intervalMs: 5, what: 'a running batch' });
    await first.stop('SIGKILL');
    const { rows: [at] } = await stack.ctx.pool.query("SELECT count(*) FILTER (WHERE status = 'running')::int AS running, count(*) FILTER (WHERE status = 'succeeded')::int AS done FROM jobs");
    console.log(`worker killed with ${at.running} jobs running and ${at.done} done`);
    expect(at.done).toBeLessThan(JOBS);

    await stack.startWorker();
    await waitFor(async () => (await stack.ctx.pool.query("SELECT count(*)::int AS n FROM jobs WHERE status = 'succeeded'")).rows[0].n === JOBS, { timeoutMs: 90_000, what: 'every job to succeed' });

    const session = await ort.InferenceSession.create(demoModel('cnn').path);
    const { rows } = await stack.ctx.pool.query('SELECT id, status, attempts FROM jobs');
    expect(rows).toHaveLength(JOBS);
    for (const [i, id] of ids.entries()) {
      const res = await stack.request('GET', `/v1/jobs/${id}`);
      const expected = (await session.run({ image: new ort.Tensor('float32', image(i), [1, 3, 32, 32]) })).logits!.data as Float32Array;
      const got: number[] = res.json.outputs[0].data;
      expect(Math.max(...got.map((v, k) => Math.abs(v - expected[k]!)))).toBeLessThanOrEqual(1e-4);
    }
    await session.release();
    // The queue is empty: nothing is left to run a second time.
    const queue = new Queue('infer.cnn', { connection: { url: stack.ctx.env.REDIS_URL }, prefix: stack.ctx.prefix });
    const counts = await queue.getJobCounts('waiting', 'active', 'prioritized', 'delayed');
    await queue.close();
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(0);
    const rerun = rows.filter((r) => r.attempts > 1).length;
    console.log(`after recovery: ${JOBS} succeeded, ${rerun} ran a second time, lost 0`);
  });
});
