import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_KEY,
  installCompletionLog,
  mlpJob,
  pauseWorkerMidBatch,
  resumeWorker,
  settleLoad,
  startPrivatePostgres,
  startStack,
  startSteadyLoad,
  waitFor,
  type PrivateService,
  type Stack,
  type TestProcess,
} from '@inferq/test-utils';

// Postgres of this file's own, restarted while a steady load submits and while
// the worker holds a batch it has claimed but not yet stored. Promise: 503
// with Retry-After while it is down (never a hang, never a 500); the worker
// keeps the finished results and writes them once it is back, without running
// the batch again; nothing is lost.

let pg: PrivateService;
let stack: Stack;
let worker: TestProcess;
beforeAll(async () => {
  pg = await startPrivatePostgres();
  stack = await startStack({ services: pg.env });
  await installCompletionLog(stack.ctx.pool);
  await stack.registerModel('mlp');
  // Claims written at once (WORKER_RUNNING_MARK_MS=0): Postgres shows when a batch is in flight.
  worker = await stack.startWorker({ WORKER_RUNNING_MARK_MS: '0' });
});
afterAll(async () => {
  if (worker) resumeWorker(worker);
  await stack?.close();
  await pg?.close();
});

/** The worker's log line for a batch whose results could not be written because Postgres is down. */
const waitedForPostgres = /"step":"store results".*"msg":"dependency unavailable; retrying"/;

describe('Postgres restarted under load', () => {
  it('refuses with 503 while down; the worker stores the batch it held once Postgres is back; nothing is lost or run twice', async () => {
    const load = startSteadyLoad(stack, { ratePerS: 25, body: mlpJob, authorization: `Bearer ${ADMIN_KEY}` });
    await waitFor(() => load.accepted.length >= 25, { timeoutMs: 20_000, what: 'jobs accepted before the restart' });
    const held = await pauseWorkerMidBatch(worker, stack.ctx.pool);
    await pg.stop();
    // The batch finishes inference now and finds Postgres gone.
    resumeWorker(worker);
    // Down for longer than the worker's queue locks last (3 s): it must keep renewing them meanwhile.
    await waitFor(() => load.refused >= 100, { timeoutMs: 30_000, what: () => `100 submissions refused while Postgres is down (${load.refused} so far)` });
    await waitFor(() => waitedForPostgres.test(worker.output()), {
      timeoutMs: 30_000,
      what: () => `the held batch to wait for Postgres; worker output:\n${worker.output().slice(-3000)}`,
    });
    await pg.start();
    const resumed = load.accepted.length;
    await waitFor(() => load.accepted.length >= resumed + 25, { timeoutMs: 20_000, what: 'jobs accepted after the restart' });
    const { result, report } = await settleLoad(stack.ctx.pool, load, `Postgres restarted (worker held ${held} claimed jobs)`);
    expect(result.violations).toEqual([]);
    // The held batch was stored by its own write, retried: no job ran twice.
    expect(report).toMatchObject({ lost: 0, duplicated: 0, failed: 0, rerun: 0 });
    expect(report.completed).toBe(report.accepted);
    expect(Object.keys(result.refusedCodes)).toEqual(['DATABASE_UNAVAILABLE']);
  });
});
