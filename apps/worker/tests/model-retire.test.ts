import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerStatus } from '@inferq/contracts';
import { mlpJob, type Stack, startStack, waitFor } from '@inferq/test-utils';

// A retired version with jobs still queued, and a real worker: the jobs run
// to the end (the artifact is kept for them), then the API's sweep deletes
// the artifact and the worker unloads the version. The sweep runs every
// 200 ms with no grace, so it would delete the artifact early if it could.

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ apiEnv: { RETIRED_ARTIFACT_SWEEP_INTERVAL_MS: '200', RETIRED_ARTIFACT_GRACE_MS: '0' } });
  await stack.registerModel('mlp');
});
afterAll(async () => {
  await stack?.close();
});

const statuses = async (ids: string[]) =>
  (await stack.ctx.pool.query<{ status: string }>('SELECT status FROM jobs WHERE id = ANY($1)', [ids])).rows.map((r) => r.status);
const artifactKey = async () => (await stack.ctx.pool.query<{ key: string }>("SELECT artifact_key AS key FROM models WHERE name = 'mlp'")).rows[0]!.key;
const workers = async (): Promise<WorkerStatus[]> => (await stack.request('GET', '/v1/workers')).json.items;

describe('a retired version with queued jobs and a live worker', () => {
  it('runs the jobs queued before the retirement, then deletes the artifact and unloads the version', async () => {
    // Paused, so the jobs are still queued when the version is retired.
    expect((await stack.request('POST', '/v1/models/mlp/pause')).status).toBe(200);
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await stack.request('POST', '/v1/jobs', mlpJob(i));
      expect(res.status).toBe(202);
      ids.push(res.json.id);
    }
    const retired = await stack.request('DELETE', '/v1/models/mlp:1');
    expect(retired.status).toBe(200);
    expect(retired.json.versions).toEqual([{ version: 1, retiredAt: expect.any(String), unfinishedJobs: 8 }]);
    expect((await stack.request('POST', '/v1/jobs', mlpJob(99))).json.code).toBe('MODEL_VERSION_RETIRED');

    // The worker starts after many sweeps have run: it still finds the artifact, and runs every kept job.
    await stack.startWorker();
    expect((await stack.request('POST', '/v1/models/mlp/resume')).status).toBe(200);
    await waitFor(async () => (await statuses(ids)).every((s) => s === 'succeeded'), { timeoutMs: 30_000, what: 'the kept jobs to run' });
    expect((await stack.request('GET', `/v1/jobs/${ids[0]}`)).json).toMatchObject({ status: 'succeeded', model: 'mlp', modelVersion: 1 });

    // No job left: the sweep deletes the artifact, and the worker lets the session go.
    const key = await artifactKey();
    await waitFor(async () => (await stack.ctx.storage.headObject(key)) === undefined, { timeoutMs: 15_000, what: 'the artifact to be swept' });
    await waitFor(
      async () => {
        const [worker] = await workers();
        return (
          worker !== undefined &&
          !worker.modelsLoaded.some((m) => m.model === 'mlp') &&
          (worker.modelEvents ?? []).some((e) => e.model === 'mlp' && e.version === 1 && e.event === 'unloaded' && e.reason === 'retired')
        );
      },
      { timeoutMs: 15_000, what: 'the worker to unload the retired version' },
    );
    // The model still shows, every version retired.
    expect((await stack.request('GET', '/v1/models/mlp')).json.retiredAt).toEqual(expect.any(String));
  });
});
