import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mlpJob, startPrivateS3, startStack, waitFor, type PrivateService, type Stack } from '@inferq/test-utils';

// Inputs the API keeps in S3 (the inline limit is set below one MLP row) travel to the worker beside their queue
// entries too (QUEUE_CARRIED_INPUTS_MB): the worker reads no object for them. Promise: jobs queued while S3 was up
// run to their results with S3 stopped, and their rows still name their input objects (the record).

let s3: PrivateService;
let stack: Stack;
beforeAll(async () => {
  s3 = await startPrivateS3();
  stack = await startStack({ services: s3.env, apiEnv: { INLINE_TENSOR_MAX_BYTES: '64' } });
  await stack.registerModel('mlp');
  await stack.startWorker();
});
afterAll(async () => {
  await stack?.close();
  await s3?.close();
});

const count = async (where: string) => (await stack.ctx.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE ${where}`)).rows[0].n as number;

describe('inputs kept in S3, carried to the worker', () => {
  it('runs jobs queued while S3 was up after S3 has stopped, reading no input object', async () => {
    // The worker loads the model (from S3) with a first job, before the backlog is queued.
    expect((await stack.request('POST', '/v1/jobs', mlpJob(100))).status).toBe(202);
    await waitFor(async () => (await count("status = 'succeeded'")) === 1, { timeoutMs: 30_000, what: 'the model loaded and a first job done' });
    expect((await stack.request('POST', '/v1/models/mlp/pause')).status).toBe(200);
    for (let i = 0; i < 12; i++) expect((await stack.request('POST', '/v1/jobs', mlpJob(i))).status).toBe(202);
    expect(await count("status = 'queued' AND inputs->0 ? 'key'")).toBe(12);
    await s3.stop();
    expect((await stack.request('POST', '/v1/models/mlp/resume')).status).toBe(200);
    await waitFor(async () => (await count("status = 'succeeded'")) === 13, { timeoutMs: 30_000, what: 'the queued jobs done with S3 stopped' });
    expect(await count("status = 'succeeded' AND inputs->0 ? 'key'")).toBe(13);
    await s3.start();
  });
});
