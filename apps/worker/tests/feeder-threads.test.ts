import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerStatus } from '@inferq/contracts';
import {
  demoModel,
  installCompletionLog,
  metricSample as sample,
  mlpJob,
  mlpRows,
  pauseWorkerMidBatch,
  resumeWorker,
  runLimited,
  type Stack,
  startStack,
  type TestProcess,
  waitFor,
  workerMetricsPort as metricsPort,
} from '@inferq/test-utils';

// A worker process with feeder threads (WORKER_FEEDERS=3): three event loops run the per-job path (queue consumers,
// claims, result writes, acknowledgements), each on its own Postgres pool and Redis connections, and feed the
// device's one copy of the model, kept by the process's main thread with its health, status and metrics.

const FEEDERS = '3';
const JOBS = 300;
let stack: Stack;
let dir: string;
beforeAll(async () => {
  stack = await startStack();
  dir = await mkdtemp(join(tmpdir(), 'inferq-feeders-'));
  await installCompletionLog(stack.ctx.pool);
  // Small batches: many of them, so every feeder takes some.
  await stack.registerModel('mlp', { maxBatchSize: '8', maxBatchDelayMs: '2' });
});
afterAll(async () => {
  await stack?.close();
  await rm(dir, { recursive: true, force: true });
});

/** The worker's JSON log lines with this message. */
const logLines = (worker: TestProcess, msg: string): Array<Record<string, unknown>> =>
  worker
    .output()
    .split('\n')
    .filter((line) => line.includes(`"msg":"${msg}"`))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
const feedersThatLogged = (worker: TestProcess, msg: string): number[] => [...new Set(logLines(worker, msg).map((l) => l.feeder as number))].sort();
const workers = async (): Promise<WorkerStatus[]> => (await stack.request('GET', '/v1/workers')).json.items;
const statusOf = async (pid: number | undefined) => (await workers()).find((w) => w.pid === pid);
const countWhere = async (where: string, params: unknown[] = []): Promise<number> =>
  (await stack.ctx.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE ${where}`, params)).rows[0]!.n;
/** Exits by itself (SIGTERM sent already): its exit code, without a second signal (which would cut its drain short). */
const exitOf = (worker: TestProcess): Promise<number | null> =>
  worker.child.exitCode !== null ? Promise.resolve(worker.child.exitCode) : new Promise((resolve) => worker.child.once('exit', (code) => resolve(code)));

/** Every job's result written once (test_completions counts the completions), on its first attempt. */
async function expectEachWrittenOnce(ids: string[]): Promise<void> {
  const {
    rows: [once],
  } = await stack.ctx.pool.query(
    `SELECT count(*)::int AS written, count(DISTINCT job_id)::int AS jobs, (SELECT max(attempts) FROM jobs WHERE id = ANY($1))::int AS attempts
       FROM test_completions WHERE job_id = ANY($1)`,
    [ids],
  );
  expect(once).toEqual({ written: ids.length, jobs: ids.length, attempts: 1 });
}

describe('a worker process with three feeder threads', () => {
  it('runs every job exactly once, with outputs equal to a direct run, on one loaded model, each feeder taking batches', async () => {
    const worker = await stack.startWorker({ WORKER_FEEDERS: FEEDERS });
    const inputs = Array.from({ length: JOBS }, (_, i) => mlpRows(1, i));
    const ids = await runLimited(JOBS, 32, async (i) => {
      const res = await stack.request('POST', '/v1/jobs', {
        model: 'mlp',
        inputs: [{ name: 'features', datatype: 'FP32', shape: [1, 64], data: Buffer.from(inputs[i]!.buffer).toString('base64') }],
      });
      expect(res.status).toBe(202);
      return res.json.id as string;
    });
    await waitFor(async () => (await countWhere("id = ANY($1) AND status = 'succeeded'", [ids])) === JOBS, { timeoutMs: 60_000, what: 'every job to succeed' });
    await expectEachWrittenOnce(ids);

    const session = await ort.InferenceSession.create(demoModel('mlp').path);
    let maxDiff = 0;
    await runLimited(JOBS, 16, async (i) => {
      const res = await stack.request('GET', `/v1/jobs/${ids[i]}`);
      const expected = (await session.run({ features: new ort.Tensor('float32', inputs[i]!, [1, 64]) })).logits!.data as Float32Array;
      const got: number[] = res.json.outputs[0].data;
      expect(got).toHaveLength(expected.length);
      for (let k = 0; k < expected.length; k++) maxDiff = Math.max(maxDiff, Math.abs(got[k]! - expected[k]!));
    });
    await session.release();
    expect(maxDiff).toBeLessThanOrEqual(1e-5);

    // Every feeder took batches; the model loaded once, on the main thread, for all of them.
    const batches = logLines(worker, 'batch completed');
    const perFeeder = [0, 1, 2].map((f) => batches.filter((b) => b.feeder === f).length);
    console.log(`batches per feeder: ${perFeeder.join(', ')} (${batches.length} in all)`);
    expect(perFeeder.every((n) => n > 0)).toBe(true);
    expect(logLines(worker, 'model loaded')).toHaveLength(1);
    expect(feedersThatLogged(worker, 'feeder started')).toEqual([0, 1, 2]);
    // The heartbeat and the metrics count every feeder's work, in one process.
    await waitFor(async () => ((await statusOf(worker.child.pid))?.jobsSucceeded ?? 0) >= JOBS, { what: 'the heartbeat to count every job' });
    const status = (await statusOf(worker.child.pid))!;
    expect(status).toMatchObject({ modelsServed: ['mlp'], modelsLoaded: [expect.objectContaining({ model: 'mlp', version: 1 })], ready: true });
    expect(status.modelEvents?.filter((e) => e.event === 'loaded')).toHaveLength(1);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort(worker)}/metrics`)).text();
    expect(sample(metrics, 'inferq_jobs_finished_total', { model: 'mlp', outcome: 'succeeded' })).toBe(JOBS);
    expect(sample(metrics, 'inferq_batch_size_count', { model: 'mlp' })).toBe(batches.length);
    expect(sample(metrics, 'inferq_worker_model_faulted', { model: 'mlp' })).toBe(0);

    worker.child.kill('SIGTERM');
    expect(await exitOf(worker)).toBe(0);
    expect(feedersThatLogged(worker, 'feeder stopped')).toEqual([0, 1, 2]);
  });

  it('closes gracefully with batches in flight: their results are stored and acknowledged, nothing is lost or run twice', async () => {
    // Claims written at once (WORKER_RUNNING_MARK_MS=0): Postgres shows the batches in flight.
    const first = await stack.startWorker({ WORKER_FEEDERS: FEEDERS, WORKER_RUNNING_MARK_MS: '0' });
    // The jobs wait in the paused queue until every one is submitted: the worker then has a backlog for the pause to
    // land in, however fast it runs them (three feeders ran all 300 as they came, and no batch was left to catch).
    expect((await stack.request('POST', '/v1/models/mlp/pause')).status).toBe(200);
    const ids = await runLimited(JOBS, 32, async (i) => (await stack.request('POST', '/v1/jobs', mlpJob(10_000 + i))).json.id as string);
    expect((await stack.request('POST', '/v1/models/mlp/resume')).status).toBe(200);
    // Frozen between a claim and its result write, then told to stop: the close lands mid-batch.
    const running = await pauseWorkerMidBatch(first, stack.ctx.pool).catch((err: unknown) => {
      // Not left running into the next test, where it would take that test's jobs.
      resumeWorker(first);
      first.child.kill('SIGKILL');
      throw err;
    });
    const {
      rows: [held],
    } = await stack.ctx.pool.query<{ worker_id: string; ids: string[] }>(
      "SELECT min(worker_id) AS worker_id, array_agg(id) AS ids FROM jobs WHERE status = 'running' AND id = ANY($1)",
      [ids],
    );
    first.child.kill('SIGTERM');
    resumeWorker(first);
    expect(await exitOf(first)).toBe(0);
    console.log(`worker closed with ${running} jobs in flight`);
    expect(running).toBeGreaterThan(0);
    // The batches in flight finished in the closing worker.
    expect(await countWhere("id = ANY($1) AND status = 'succeeded' AND worker_id = $2", [held!.ids, held!.worker_id])).toBe(held!.ids.length);
    expect(await countWhere("id = ANY($1) AND status = 'running'", [ids])).toBe(0);

    // The rest waited in the queue for the next worker.
    const second = await stack.startWorker({ WORKER_FEEDERS: FEEDERS });
    await waitFor(async () => (await countWhere("id = ANY($1) AND status = 'succeeded'", [ids])) === JOBS, { timeoutMs: 60_000, what: 'every job to succeed' });
    await expectEachWrittenOnce(ids);
    second.child.kill('SIGTERM');
    expect(await exitOf(second)).toBe(0);
  });

  it('pauses a model on every feeder when the worker cannot load it, and resumes it on every feeder once it can', async () => {
    // Its model cache under a file: no model can be written (a fault of this worker's, not of the jobs).
    const blocker = join(dir, 'blocker');
    await writeFile(blocker, 'a file where the model cache directory should be');
    const bad = await stack.startWorker({ WORKER_FEEDERS: FEEDERS, MODEL_CACHE_DIR: join(blocker, 'cache') });
    const ids = await runLimited(30, 8, async (i) => (await stack.request('POST', '/v1/jobs', mlpJob(20_000 + i))).json.id as string);
    await waitFor(async () => (await statusOf(bad.child.pid))?.ready === false, { what: 'the worker to report not ready' });
    await waitFor(() => feedersThatLogged(bad, 'model paused on this feeder: the worker cannot load it').length === 3, { what: 'every feeder to pause' });
    expect(logLines(bad, 'worker fault: not taking this model until it loads here again')).toHaveLength(1);
    expect(await countWhere("id = ANY($1) AND status NOT IN ('queued', 'running')", [ids])).toBe(0);

    await rm(blocker);
    await waitFor(async () => (await statusOf(bad.child.pid))?.ready === true, { timeoutMs: 60_000, what: 'the worker to recover by itself' });
    await waitFor(() => feedersThatLogged(bad, 'model resumed on this feeder').length === 3, { what: 'every feeder to resume' });
    await waitFor(async () => (await countWhere("id = ANY($1) AND status = 'succeeded'", [ids])) === 30, { timeoutMs: 60_000, what: 'the jobs to run' });
    expect(await countWhere("id = ANY($1) AND status = 'failed'", [ids])).toBe(0);
  });
});
