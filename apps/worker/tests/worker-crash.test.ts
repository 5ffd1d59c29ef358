import { createJobProducer, createRedisConnection, waitForReady } from '@inferq/queue';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_KEY,
  auditJobs,
  demoModel,
  formatLedger,
  installCompletionLog,
  pauseWorkerMidBatch,
  runLimited,
  settleLoad,
  type Stack,
  startStack,
  startSteadyLoad,
  waitFor,
} from '@inferq/test-utils';

/** The backlog submitted around the kill. */
const JOBS = 480;
let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
  await installCompletionLog(stack.ctx.pool);
  // Big, slow batches of the CNN so the kill lands while one is running.
  await stack.registerModel('cnn', { maxBatchSize: '16', maxBatchDelayMs: '50' });
});
afterAll(() => stack?.close());

const image = (seed: number) => Float32Array.from({ length: 3 * 32 * 32 }, (_, i) => Math.cos(seed * 3.1 + i * 0.37));
const cnnJob = (seed: number) => ({
  model: 'cnn',
  inputs: [{ name: 'image', datatype: 'FP32', shape: [1, 3, 32, 32], data: Buffer.from(image(seed).buffer).toString('base64') }],
});

describe('a worker killed with SIGKILL mid-batch', () => {
  it('loses nothing: after a new worker starts, every job completes exactly once with the right output', async () => {
    // The worker first: started after the backlog, a warm one drained all of it before the test could see a batch.
    // Claims written at once (WORKER_RUNNING_MARK_MS=0): Postgres shows the batch in flight, so the kill is seen to land mid-batch.
    const first = await stack.startWorker({ INTRA_OP_THREADS: '1', WORKER_RUNNING_MARK_MS: '0' });
    // Submissions keep arriving through the kill and the restart.
    const load = startSteadyLoad(stack, { ratePerS: 50, body: (i) => cnnJob(JOBS + i), authorization: `Bearer ${ADMIN_KEY}` });
    const ids = await runLimited(JOBS, 32, async (i) => {
      const res = await stack.request('POST', '/v1/jobs', cnnJob(i));
      expect(res.status).toBe(202);
      return res.json.id as string;
    });
    // Frozen between a claim and its result write, then killed: the kill lands mid-batch every time.
    await pauseWorkerMidBatch(first, stack.ctx.pool);
    await first.stop('SIGKILL');
    const {
      rows: [at],
    } = await stack.ctx.pool.query(
      "SELECT count(*) FILTER (WHERE status = 'running')::int AS running, count(*) FILTER (WHERE status = 'succeeded')::int AS done FROM jobs",
    );
    console.log(`worker killed with ${at.running} jobs running and ${at.done} done`);
    expect(at.running).toBeGreaterThan(0);

    await stack.startWorker();
    await waitFor(() => load.accepted.length >= 50, { what: 'submissions accepted after the restart' });
    const { result } = await settleLoad(stack.ctx.pool, load, 'steady load through the kill', 90_000);
    expect(result.violations).toEqual([]);
    await waitFor(
      async () => (await stack.ctx.pool.query("SELECT count(*)::int AS n FROM jobs WHERE status = 'succeeded'")).rows[0].n === JOBS + result.accepted.length,
      { timeoutMs: 90_000, what: 'every job to succeed' },
    );
    // The backlog and the steady load together.
    const report = await auditJobs(stack.ctx.pool, { ...result, submitted: JOBS + result.submitted, accepted: [...ids, ...result.accepted] });
    console.log(formatLedger('worker killed with SIGKILL mid-batch', report));
    expect(report).toMatchObject({ lost: 0, duplicated: 0, failed: 0, completed: JOBS + result.accepted.length });

    const session = await ort.InferenceSession.create(demoModel('cnn').path);
    const { rows } = await stack.ctx.pool.query('SELECT id, status, attempts FROM jobs WHERE id = ANY($1::uuid[])', [ids]);
    expect(rows).toHaveLength(JOBS);
    for (const [i, id] of ids.entries()) {
      const res = await stack.request('GET', `/v1/jobs/${id}`);
      const expected = (await session.run({ image: new ort.Tensor('float32', image(i), [1, 3, 32, 32]) })).logits!.data as Float32Array;
      const got: number[] = res.json.outputs[0].data;
      expect(Math.max(...got.map((v, k) => Math.abs(v - expected[k]!)))).toBeLessThanOrEqual(1e-4);
    }
    await session.release();
    // The queue is empty: nothing is left to run a second time.
    const connection = createRedisConnection(stack.ctx.env.REDIS_URL!, 'producer');
    const producer = createJobProducer({ connection, prefix: stack.ctx.prefix });
    // A producer sends nothing before its connection is ready.
    await waitForReady(connection, 10_000);
    const depth = await producer.readDepth('cnn');
    await producer.close();
    connection.disconnect();
    expect(depth).toMatchObject({ high: 0, normal: 0, low: 0, batch: 0, active: 0, delayed: 0 });
  });
});
