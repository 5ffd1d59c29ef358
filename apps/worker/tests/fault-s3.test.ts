import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_KEY,
  installCompletionLog,
  mlpJob,
  pauseWorkerForBacklog,
  queuedInPostgres,
  resumeWorker,
  settleLoad,
  startPrivateS3,
  startStack,
  startSteadyLoad,
  waitFor,
  type PrivateService,
  type Stack,
  type TestProcess,
} from '@inferq/test-utils';

// S3 of this file's own, stopped while a steady load submits jobs whose
// inputs and outputs are too large to travel inline (the inline limit is set
// below one MLP row). Promise: submissions get 503 STORAGE_UNAVAILABLE with
// Retry-After while it is down; jobs already accepted wait for it and then
// complete; none fails for good, none runs twice.

let s3: PrivateService;
let stack: Stack;
let worker: TestProcess;
beforeAll(async () => {
  s3 = await startPrivateS3();
  stack = await startStack({ services: s3.env, apiEnv: { INLINE_TENSOR_MAX_BYTES: '64' } });
  await installCompletionLog(stack.ctx.pool);
  await stack.registerModel('mlp');
  worker = await stack.startWorker({ INLINE_TENSOR_MAX_BYTES: '32' });
});
afterAll(async () => {
  if (worker) resumeWorker(worker);
  await stack?.close();
  await s3?.close();
});

/** The worker's log line for a batch whose inputs could not be read because S3 is down. */
// Reading a claimed batch's inputs, or storing the outputs of one whose inputs
// were read before the pause (two batches in flight can both be there).
const waitedForS3 = /"step":"(read inputs|store results)".*"msg":"dependency unavailable; retrying"/;
const count = async (where: string) => (await stack.ctx.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE ${where}`)).rows[0].n as number;

describe('S3 unavailable under load', () => {
  it('refuses large submissions with 503; accepted jobs read their inputs and store their outputs once it is back', async () => {
    const load = startSteadyLoad(stack, { ratePerS: 25, body: mlpJob, authorization: `Bearer ${ADMIN_KEY}` });
    await waitFor(async () => (await count("status = 'succeeded'")) >= 10, { timeoutMs: 20_000, what: 'jobs done before the outage' });
    // A backlog whose inputs are in S3, for the worker to find S3 gone.
    const backlog = await pauseWorkerForBacklog(worker, queuedInPostgres(stack.ctx.pool), 20);
    await s3.stop();
    resumeWorker(worker);
    await waitFor(() => load.refused >= 50 && waitedForS3.test(worker.output()), {
      timeoutMs: 20_000,
      what: 'submissions refused and the worker waiting while S3 is down',
    });
    await s3.start();
    const resumed = load.accepted.length;
    await waitFor(() => load.accepted.length >= resumed + 25, { timeoutMs: 20_000, what: 'jobs accepted after the outage' });
    const { result, report } = await settleLoad(stack.ctx.pool, load, `S3 unavailable (${backlog} jobs queued when it stopped)`);
    expect(result.violations).toEqual([]);
    // Waiting for S3 spent no attempt: no job ran twice.
    expect(report).toMatchObject({ lost: 0, duplicated: 0, failed: 0, rerun: 0 });
    expect(report.completed).toBe(report.accepted);
    expect(Object.keys(result.refusedCodes)).toEqual(['STORAGE_UNAVAILABLE']);
    // Inputs and outputs went through S3.
    expect(await count("inputs->0 ? 'key' AND outputs->0 ? 'key'")).toBe(report.accepted);
  });
});
