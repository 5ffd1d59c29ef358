import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ModelEvent, WorkerStatus } from '@inferq/contracts';
import { mlpJob, startStack, waitFor, type Stack, type TestProcess } from '@inferq/test-utils';

// Real worker processes, one at a time over one stack: preloading and
// warming at start, unloading after idling, and unloading the least recently
// used model to stay under a memory budget, all seen through GET /v1/workers.

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
  await stack.registerModel('mlp', { maxBatchSize: '8', maxBatchDelayMs: '2' });
  // The same file under a second name: a second model of the same size.
  await stack.registerModel('mlp2', { maxBatchSize: '8', maxBatchDelayMs: '2' }, 'mlp');
});
afterAll(() => stack?.close());
// Each test's workers stop before the next starts, even when it fails: a leftover would take the next one's jobs.
const started: TestProcess[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((w) => w.stop('SIGTERM')));
});
const startWorker = async (env: Record<string, string>): Promise<TestProcess> => {
  const worker = await stack.startWorker(env);
  started.push(worker);
  return worker;
};

const statusOf = async (worker: TestProcess): Promise<WorkerStatus | undefined> =>
  ((await stack.request('GET', '/v1/workers')).json.items as WorkerStatus[]).find((w) => w.pid === worker.child.pid);
const eventsOf = (s: WorkerStatus | undefined): string[] =>
  (s?.modelEvents ?? []).map((e: ModelEvent) => `${e.model} ${e.event}${e.reason ? ` ${e.reason}` : ''}`);

/** Submits one job and waits for it to succeed; resolves with the finished job. */
async function runJob(model: string, seed: number): Promise<{ inferMs: number; workerId: string }> {
  const res = await stack.request('POST', '/v1/jobs', { ...mlpJob(seed), model });
  expect(res.status).toBe(202);
  return waitFor(
    async () => {
      const job = (await stack.request('GET', `/v1/jobs/${res.json.id}`)).json;
      if (job.status === 'failed') throw new Error(`job failed: ${JSON.stringify(job.error)}`);
      return job.status === 'succeeded' ? job : undefined;
    },
    { timeoutMs: 30_000, what: `the ${model} job to succeed` },
  );
}

describe('warm models', () => {
  it('preloads and warms a model before taking jobs; the first job then runs warm', async () => {
    // For comparison: a cold first batch, with warm-up off and no preload.
    const cold = await startWorker({ MODEL_WARMUP: 'false' });
    const coldJob = await runJob('mlp', 1);
    await waitFor(async () => eventsOf(await statusOf(cold)).includes('mlp loaded'), { what: 'the cold load in a heartbeat' });
    expect(eventsOf(await statusOf(cold))).toEqual(['mlp loaded']);
    await cold.stop('SIGTERM');

    const worker = await startWorker({ WORKER_PRELOAD_MODELS: 'mlp' });
    const status = await waitFor(
      async () => {
        const s = await statusOf(worker);
        return s?.modelsServed.includes('mlp') ? s : undefined;
      },
      { what: 'the worker to serve mlp' },
    );
    // It beat while preloading; by the time it consumes the queue the model is loaded and warm.
    expect(eventsOf(status)).toEqual(['mlp loaded', 'mlp warmed']);
    expect(status.modelsLoaded).toEqual([expect.objectContaining({ model: 'mlp', version: 1, provider: 'cpu', lastUsedAt: expect.any(String) })]);
    const [loaded, warmed] = status.modelEvents!;
    expect(loaded!.ms).toBeGreaterThan(0);
    expect(warmed!.ms).toBeGreaterThan(0);
    expect(worker.output()).toMatch(/"msg":"model preloaded"/);

    const warmJob = await runJob('mlp', 2);
    console.log(
      `first batch inferMs: cold ${coldJob.inferMs.toFixed(2)} ms, after warm-up ` +
        `${warmJob.inferMs.toFixed(2)} ms; load ${loaded!.ms} ms, warm-up run ${warmed!.ms} ms`,
    );
    expect(eventsOf(await statusOf(worker))).toEqual(['mlp loaded', 'mlp warmed']);
  });

  it('unloads a model after it idles, and loads it again for the next job', async () => {
    const worker = await startWorker({ MODEL_IDLE_UNLOAD_S: '1' });
    await runJob('mlp', 3);
    const idled = await waitFor(
      async () => {
        const s = await statusOf(worker);
        return eventsOf(s).includes('mlp unloaded idle') ? s : undefined;
      },
      { timeoutMs: 15_000, what: 'mlp to be unloaded after idling' },
    );
    expect(idled.modelsLoaded).toEqual([]);

    await runJob('mlp', 4);
    const reloaded = await waitFor(
      async () => {
        const s = await statusOf(worker);
        return s?.modelsLoaded.length === 1 ? s : undefined;
      },
      { what: 'the heartbeat to show mlp loaded again' },
    );
    expect(eventsOf(reloaded).slice(0, 5)).toEqual(['mlp loaded', 'mlp warmed', 'mlp unloaded idle', 'mlp loaded', 'mlp warmed']);
  });

  it('unloads the least recently used model to stay under the memory budget', async () => {
    // mlp.onnx is ~340 KB, reckoned at twice that loaded: one fits in 1 MB, two do not.
    const worker = await startWorker({ MODEL_MEMORY_BUDGET_MB: '1' });
    await runJob('mlp', 5);
    await runJob('mlp2', 6);
    const status = await waitFor(
      async () => {
        const s = await statusOf(worker);
        return eventsOf(s).includes('mlp unloaded memory') && s?.modelsLoaded.length === 1 ? s : undefined;
      },
      { what: 'mlp to be unloaded for mlp2' },
    );
    expect(eventsOf(status)).toEqual(['mlp loaded', 'mlp warmed', 'mlp unloaded memory', 'mlp2 loaded', 'mlp2 warmed']);
    expect(status.modelsLoaded).toEqual([expect.objectContaining({ model: 'mlp2' })]);
    // And back: mlp's next job succeeds and pushes mlp2 out.
    await runJob('mlp', 7);
    await waitFor(async () => eventsOf(await statusOf(worker)).includes('mlp2 unloaded memory'), { what: 'mlp2 to be unloaded for mlp' });
  });
});
