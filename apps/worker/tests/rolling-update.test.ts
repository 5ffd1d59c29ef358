import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_KEY,
  installCompletionLog,
  mlpJob,
  settleLoad,
  startLoadBalancer,
  startStack,
  startSteadyLoad,
  waitFor,
  type LoadBalancer,
  type Stack,
  type TestProcess,
} from '@inferq/test-utils';

// A rolling update, done the way the Kubernetes manifests do it, under a
// steady load: each API replica is replaced by starting the new one, adding
// it behind the load balancer once ready, taking the old one out, waiting a
// moment (the preStop sleep) and stopping it with SIGTERM; then each worker
// is replaced (new one first, old one SIGTERM, drained). No client may see an
// error, and every accepted job must finish exactly once.

const DRAIN_MS = 300;
let stack: Stack;
let lb: LoadBalancer;
/** The two API replicas running before the update. */
let replicas: Array<{ process: TestProcess; baseUrl: string }>;
beforeAll(async () => {
  stack = await startStack();
  await installCompletionLog(stack.ctx.pool);
  await stack.registerModel('mlp', { maxBatchSize: '16', maxBatchDelayMs: '10' });
  replicas = [{ process: stack.api, baseUrl: stack.baseUrl }, await stack.startApi()];
  lb = await startLoadBalancer(replicas.map((r) => r.baseUrl));
});
afterAll(async () => {
  await lb?.close();
  await stack?.close();
});

const ready = async (baseUrl: string) => (await fetch(`${baseUrl}/readyz`).catch(() => undefined))?.status === 200;

describe('a rolling update of the API replicas and the workers under load', () => {
  it('loses no job, runs none twice, and no client sees an error', async () => {
    const oldWorker = await stack.startWorker();
    const load = startSteadyLoad(lb, { ratePerS: 100, body: mlpJob, authorization: `Bearer ${ADMIN_KEY}` });
    await waitFor(() => load.accepted.length >= 50, { what: 'the load to be flowing' });

    for (const old of replicas) {
      const fresh = await stack.startApi();
      await waitFor(() => ready(fresh.baseUrl), { what: 'the new API to be ready' });
      lb.add(fresh.baseUrl);
      lb.remove(old.baseUrl);
      await new Promise((r) => setTimeout(r, DRAIN_MS));
      const code = await old.process.stop('SIGTERM');
      expect(code, `the old API's output:\n${old.process.output().slice(-4000)}`).toBe(0);
    }
    const acceptedAfterApis = load.accepted.length;

    const newWorker = await stack.startWorker();
    expect(await oldWorker.stop('SIGTERM')).toBe(0);
    await waitFor(() => load.accepted.length >= acceptedAfterApis + 100, { what: 'jobs accepted after the roll' });
    expect(newWorker.child.exitCode).toBe(null);

    const { result, report } = await settleLoad(stack.ctx.pool, load, 'rolling update', 60_000);
    expect(result.violations).toEqual([]);
    expect(result.refused).toBe(0);
    expect(report).toMatchObject({ lost: 0, duplicated: 0, failed: 0 });
    expect(report.completed).toBe(result.accepted.length);
    // A hang guard, not a timing: four process starts under load take 55 s on a quiet 2-core box and more on a busy one.
  }, 180_000);
});
