import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mlpJob, startStack, waitFor, type Stack, type TestProcess } from '@inferq/test-utils';

// Deadline-aware batching with a real worker: a job near its deadline closes
// its batch early instead of waiting out the model's delay. (A job that would
// miss its deadline anyway is expired unrun: batch-runner.test.ts, with a
// profile set by hand.)

let stack: Stack;
let worker: TestProcess;
beforeAll(async () => {
  stack = await startStack();
  // A delay far longer than the deadlines below: only deadline scheduling can make them.
  await stack.registerModel('mlp', { maxBatchSize: '32', maxBatchDelayMs: '1500' });
  worker = await stack.startWorker();
});
afterAll(() => stack?.close());

const settled = (id: string) =>
  waitFor(
    async () => {
      const job = (await stack.request('GET', `/v1/jobs/${id}`)).json;
      return ['succeeded', 'failed', 'expired'].includes(job.status) ? job : undefined;
    },
    { timeoutMs: 30_000, what: `job ${id} to finish` },
  );

async function submit(body: object, deadlineInMs?: number): Promise<string> {
  const res = await stack.request('POST', '/v1/jobs', {
    ...body,
    ...(deadlineInMs === undefined ? {} : { deadline: new Date(Date.now() + deadlineInMs).toISOString() }),
  });
  expect(res.status, JSON.stringify(res.json)).toBe(202);
  return res.json.id;
}

describe('deadline-aware scheduling', () => {
  it('closes a batch early for a job near its deadline, which finishes in time', async () => {
    // First batches measure the model's inference and service time (each closes early for its deadline: no full delay).
    for (let i = 0; i < 3; i++) expect((await settled(await submit(mlpJob(10 + i), 1_000))).status).toBe('succeeded');

    const submittedAt = Date.now();
    const id = await submit(mlpJob(2), 600);
    const job = await settled(id);
    const tookMs = Date.parse(job.finishedAt) - submittedAt;
    console.log(
      `job with a 600 ms deadline in a model with a 1500 ms delay: finished after ${tookMs} ms, ` +
        `${Date.parse(job.deadline) - Date.parse(job.finishedAt)} ms before its deadline`,
    );
    expect(job.status).toBe('succeeded');
    expect(Date.parse(job.finishedAt)).toBeLessThanOrEqual(Date.parse(job.deadline));
    expect(tookMs).toBeLessThan(1_500);
  });

  it('without it (DEADLINE_SCHEDULING=false) the same job waits out the delay and expires', async () => {
    await worker.stop('SIGTERM');
    await stack.startWorker({ DEADLINE_SCHEDULING: 'false' });
    const job = await settled(await submit(mlpJob(3), 600));
    expect(job).toMatchObject({ status: 'expired', error: { code: 'DEADLINE_EXCEEDED' } });
  });
});
