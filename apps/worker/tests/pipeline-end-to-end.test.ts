import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoModel, mlpRows, runLimited, type Stack, startStack, testJobId, waitFor } from '@inferq/test-utils';

const JOBS = 1_000;
const PRIORITIES = ['high', 'normal', 'low'] as const;
let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
  await stack.registerModel('mlp', { maxBatchSize: '32', maxBatchDelayMs: '5' });
  await stack.startWorker();
});
afterAll(() => stack?.close());

describe('the job pipeline over HTTP', () => {
  it(`runs ${JOBS} MLP jobs across all priorities in batches, with outputs equal to a direct onnxruntime run`, async () => {
    const started = performance.now();
    const inputs = Array.from({ length: JOBS }, (_, i) => mlpRows(1 + (i % 3 === 0 ? 1 : 0), i));
    const ids = await runLimited(JOBS, 32, async (i) => {
      const x = inputs[i]!;
      // Half as JSON arrays, half as base64 little-endian bytes.
      const data = i % 2 ? Array.from(x) : Buffer.from(x.buffer).toString('base64');
      const res = await stack.request('POST', '/v1/jobs', {
        model: 'mlp',
        priority: PRIORITIES[i % 3],
        inputs: [{ name: 'features', datatype: 'FP32', shape: [x.length / 64, 64], data }],
      });
      expect(res.status).toBe(202);
      return res.json.id as string;
    });
    const submittedS = (performance.now() - started) / 1000;
    await waitFor(
      async () => {
        const { rows } = await stack.ctx.pool.query("SELECT count(*)::int AS n FROM jobs WHERE status = 'succeeded'");
        return rows[0].n === JOBS;
      },
      { timeoutMs: 120_000, what: 'every job to succeed' },
    );
    const totalS = (performance.now() - started) / 1000;
    const {
      rows: [batches],
    } = await stack.ctx.pool.query('SELECT count(DISTINCT batch_id)::int AS n, max(batch_size)::int AS max, avg(batch_size)::float AS avg FROM jobs');
    console.log(
      `pipeline: ${JOBS} jobs submitted in ${submittedS.toFixed(2)} s, all done in ${totalS.toFixed(2)} s = ` +
        `${(JOBS / totalS).toFixed(0)} jobs/s; ${batches.n} batches, avg batch size ${batches.avg.toFixed(1)}, max ${batches.max}`,
    );
    expect(batches.max).toBeGreaterThan(1);

    const session = await ort.InferenceSession.create(demoModel('mlp').path);
    let maxDiff = 0;
    await runLimited(JOBS, 16, async (i) => {
      const res = await stack.request('GET', `/v1/jobs/${ids[i]}`);
      expect(res.json.status).toBe('succeeded');
      const x = inputs[i]!;
      const expected = (await session.run({ features: new ort.Tensor('float32', x, [x.length / 64, 64]) })).logits!.data as Float32Array;
      const out = res.json.outputs[0];
      expect(out).toMatchObject({ name: 'logits', datatype: 'FP32', shape: [x.length / 64, 16] });
      expect(out.data).toHaveLength(expected.length);
      for (let k = 0; k < expected.length; k++) maxDiff = Math.max(maxDiff, Math.abs(out.data[k] - expected[k]!));
    });
    await session.release();
    expect(maxDiff).toBeLessThanOrEqual(1e-5);
    const timing = await stack.request('GET', `/v1/jobs/${ids[0]}`);
    expect(timing.json.queueMs).toBeGreaterThanOrEqual(0);
    expect(timing.json.inferMs).toBeGreaterThan(0);
    expect(timing.json.batchSize).toBeGreaterThanOrEqual(1);

    // The worker's heartbeat and the stats endpoint see the same work.
    await waitFor(async () => (await stack.request('GET', '/v1/workers')).json.items[0]?.jobsSucceeded >= JOBS, { what: 'the heartbeat to count every job' });
    const [worker] = (await stack.request('GET', '/v1/workers')).json.items;
    expect(worker).toMatchObject({
      device: 'cpu',
      modelsServed: ['mlp'],
      modelsLoaded: [expect.objectContaining({ model: 'mlp', version: 1, provider: 'cpu' })],
      gpu: null,
    });
    const stats = (await stack.request('GET', '/v1/stats')).json;
    expect(stats.series.reduce((n: number, p: { completed: number }) => n + p.completed, 0)).toBe(JOBS);
    expect(stats.avgBatchSize).toBeCloseTo(batches.avg, 5);
    expect(stats.workersOnline).toBe(1);
    // Broken down per model version and per worker: the same jobs, the same batches.
    const [mlp] = stats.models;
    expect(stats.models).toHaveLength(1);
    expect(mlp).toMatchObject({ model: 'mlp', version: 1, completed: JOBS, failed: 0, errorRate: 0 });
    expect(mlp.avgBatchSize).toBeCloseTo(batches.avg, 5);
    expect(mlp.queueMsP50).toBeLessThanOrEqual(mlp.queueMsP95);
    expect(mlp.queueMsP95).toBeLessThanOrEqual(mlp.queueMsP99);
    expect(mlp.inferMsP99).toBeGreaterThan(0);
    expect(mlp.completedPerSec).toBeCloseTo(JOBS / (stats.windowMinutes * 60), 5);
    expect(stats.workers).toEqual([expect.objectContaining({ workerId: worker.workerId, completed: JOBS, failed: 0 })]);
    expect(stats.queueMsP99).toBeGreaterThanOrEqual(stats.queueMsP95);
    expect(stats.queues).toEqual([expect.objectContaining({ model: 'mlp', oldestQueuedS: null })]);
  });

  it('fails only the job whose stored input is gone; its batch mate succeeds', async () => {
    // A model of its own with a long batch delay: the two jobs share a batch however busy the box is.
    await stack.registerModel('mlp-pair', { maxBatchSize: '2', maxBatchDelayMs: '1000' }, 'mlp');
    const {
      rows: [owner],
    } = await stack.ctx.pool.query('SELECT id FROM api_keys LIMIT 1');
    const head = { name: 'features', datatype: 'FP32', shape: [1, 64], bytes: 256 };
    const jobs = [
      { id: testJobId(), inputs: [{ ...head, key: 'jobs/gone/inputs/0' }] },
      { id: testJobId(), inputs: [{ ...head, b64: Buffer.from(mlpRows(1, 3).buffer).toString('base64') }] },
    ];
    // Rows only, as after a crash before the enqueue: the reconciler queues both, with one batch key.
    for (const j of jobs) {
      await stack.ctx.pool.query(
        "INSERT INTO jobs (id, owner_key_id, model_name, model_version, priority, status, inputs) VALUES ($1, $2, 'mlp-pair', 1, 'normal', 'queued', $3)",
        [j.id, owner.id, JSON.stringify(j.inputs)],
      );
    }
    const finished = await waitFor(
      async () => {
        const { rows } = await stack.ctx.pool.query(
          "SELECT id, status, error_code, batch_id FROM jobs WHERE id = ANY($1) AND status IN ('succeeded', 'failed')",
          [jobs.map((j) => j.id)],
        );
        return rows.length === 2 ? new Map(rows.map((r) => [r.id, r])) : undefined;
      },
      { timeoutMs: 30_000, what: 'both jobs to finish' },
    );
    expect(finished.get(jobs[0]!.id)).toMatchObject({ status: 'failed', error_code: 'INPUT_DATA_INVALID' });
    expect(finished.get(jobs[1]!.id)).toMatchObject({ status: 'succeeded', error_code: null, batch_id: finished.get(jobs[0]!.id).batch_id });
  });

  it('stores large outputs in S3 and serves them by presigned URL', async () => {
    const rows = 1_100; // 1,100 × 16 FP32 = 70 KB of output, over the 64 KiB inline limit
    const x = mlpRows(rows, 99);
    const res = await stack.request('POST', '/v1/jobs', {
      model: 'mlp',
      inputs: [{ name: 'features', datatype: 'FP32', shape: [rows, 64], data: Buffer.from(x.buffer).toString('base64') }],
    });
    expect(res.status).toBe(202);
    const job = await waitFor(
      async () => {
        const r = await stack.request('GET', `/v1/jobs/${res.json.id}`);
        return r.json.status === 'succeeded' ? r.json : undefined;
      },
      { what: 'the large job' },
    );
    const out = job.outputs[0];
    expect(out.data).toBeUndefined();
    const bytes = new Float32Array(await (await fetch(out.url)).arrayBuffer());
    expect(bytes.length).toBe(rows * 16);
    const {
      rows: [row],
    } = await stack.ctx.pool.query('SELECT inputs FROM jobs WHERE id = $1', [res.json.id]);
    expect(row.inputs[0].key).toMatch(/^jobs\//);
  });
});
