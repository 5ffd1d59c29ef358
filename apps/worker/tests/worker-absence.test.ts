import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, installCompletionLog, mlpJob, settleLoad, startStack, startSteadyLoad, waitFor, type Stack, type TestProcess } from '@inferq/test-utils';

// A worker going away on purpose (SIGTERM) or every worker gone: the steady
// load keeps submitting through both, and nothing it was promised is lost.

let stack: Stack;
/** The worker serving when a test ends. */
let serving: TestProcess;
beforeAll(async () => {
  stack = await startStack();
  await installCompletionLog(stack.ctx.pool);
  // Batches big and slow enough that SIGTERM lands while the worker holds some.
  await stack.registerModel('cnn', { maxBatchSize: '16', maxBatchDelayMs: '20' });
  await stack.registerModel('mlp');
});
afterAll(() => stack?.close());

const image = (seed: number) => Buffer.from(Float32Array.from({ length: 3 * 32 * 32 }, (_, i) => Math.cos(seed * 3.1 + i * 0.37)).buffer).toString('base64');
const cnnJob = (i: number) => ({ model: 'cnn', inputs: [{ name: 'image', datatype: 'FP32', shape: [1, 3, 32, 32], data: image(i) }] });
const authorization = `Bearer ${ADMIN_KEY}`;
const unfinished = async (ids: readonly string[]) =>
  (await stack.ctx.pool.query("SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) AND status IN ('queued', 'running')", [ids])).rows[0].n as number;

describe('a worker stopped with SIGTERM', () => {
  it('finishes what it holds, takes nothing new, exits within its bound; nothing is lost or run twice', async () => {
    // Claims written at once (WORKER_RUNNING_MARK_MS=0): Postgres shows when a batch is in flight.
    const first = await stack.startWorker({ WORKER_RUNNING_MARK_MS: '0' });
    const load = startSteadyLoad(stack, { ratePerS: 100, body: cnnJob, authorization });
    await waitFor(async () => (await stack.ctx.pool.query("SELECT 1 FROM jobs WHERE status = 'running'")).rowCount, { intervalMs: 5, what: 'a running batch' });

    const signalledAt = new Date();
    const stoppedAt = Date.now();
    const code = await first.stop('SIGTERM');
    const exitMs = Date.now() - stoppedAt;
    // Its batches ran to the end: none of its jobs is left running for a lock to expire.
    const {
      rows: [left],
    } = await stack.ctx.pool.query(
      `SELECT count(*) FILTER (WHERE status = 'running')::int AS running,
              count(*) FILTER (WHERE started_at > $1)::int AS started_after
         FROM jobs WHERE worker_id LIKE $2`,
      [signalledAt, `%-${first.child.pid}`],
    );
    console.log(`SIGTERM: exit code ${code} after ${exitMs} ms; ${left.started_after} jobs it already held started after the signal`);
    expect(code).toBe(0);
    expect(exitMs).toBeLessThan(10_000);
    expect(left.running).toBe(0);
    // What it held at the signal is at most its prefetch: three batches of 16.
    expect(left.started_after).toBeLessThanOrEqual(48);

    serving = await stack.startWorker();
    const { result, report } = await settleLoad(stack.ctx.pool, load, 'worker stopped with SIGTERM', 60_000);
    expect(result.violations).toEqual([]);
    // Graceful means no job had to run a second time.
    expect(report).toMatchObject({ lost: 0, duplicated: 0, failed: 0, rerun: 0 });
    expect(report.completed).toBe(result.accepted.length);
  });
});

describe('no worker serving a model', () => {
  it('keeps its jobs queued, says so in /readyz and the stats, fails waiting callers fast, and recovers alone', async () => {
    await serving.stop('SIGTERM');
    await waitFor(async () => (await readyz()).modelsWithoutWorker.length === 2, { what: 'the worker to be gone from the registry' });

    const load = startSteadyLoad(stack, { ratePerS: 50, body: mlpJob, authorization });
    await waitFor(() => load.accepted.length >= 20, { what: 'jobs accepted with no worker' });
    // A copy: the load goes on accepting while the count is read.
    const acceptedSoFar = [...load.accepted];
    expect(await unfinished(acceptedSoFar)).toBe(acceptedSoFar.length);
    expect(await readyz()).toMatchObject({ status: 'degraded', modelsWithoutWorker: ['cnn', 'mlp'] });
    const stats = (await stack.request('GET', '/v1/stats')).json;
    const mlpQueue = stats.queues.find((q: { model: string }) => q.model === 'mlp');
    expect(mlpQueue).toMatchObject({ workers: 0 });
    expect(mlpQueue.oldestQueuedS).toBeGreaterThan(0);

    const started = Date.now();
    const waited = await submitAndWait();
    expect(waited.status).toBe(503);
    expect(waited.json.code).toBe('MODEL_UNAVAILABLE');
    expect(Date.now() - started).toBeLessThan(1_000);

    await stack.startWorker();
    await waitFor(async () => (await submitAndWait()).status === 200, { what: 'a waiting caller to get its result once a worker is back' });
    const { result, report } = await settleLoad(stack.ctx.pool, load, 'no worker, then one', 60_000);
    expect(result.violations).toEqual([]);
    expect(report).toMatchObject({ lost: 0, duplicated: 0, failed: 0 });
  });
});

async function readyz(): Promise<{ status: string; modelsWithoutWorker: string[] }> {
  return (await fetch(`${stack.baseUrl}/readyz`)).json() as Promise<{ status: string; modelsWithoutWorker: string[] }>;
}

async function submitAndWait(): Promise<{ status: number; json: any }> {
  return stack.request('POST', '/v1/jobs', mlpJob(0), { prefer: 'wait=10' });
}
