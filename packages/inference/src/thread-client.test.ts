import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { ModelLoadError } from './model-load-error.ts';
import { ThreadClient } from './thread-client.ts';

/** A stand-in session thread: says ready, then does `onRun` (JavaScript source) for each request. */
const fakeThread = (onRun: string, ready = true): Worker =>
  new Worker(
    `const { parentPort } = require('node:worker_threads');
     ${ready ? "parentPort.postMessage({ type: 'ready', provider: 'cpu', failedProviders: [], inputNames: ['X'], outputNames: ['Y'] });" : ''}
     parentPort.on('message', (request) => { ${onRun} });`,
    { eval: true },
  );

describe('ThreadClient', () => {
  it('correlates replies with requests by id, even out of order', async () => {
    const worker = fakeThread(`setTimeout(() => parentPort.postMessage({ type: 'closed', id: request.id }), request.id === 1 ? 30 : 0);`);
    const client = new ThreadClient(worker);
    await expect(client.ready).resolves.toMatchObject({ provider: 'cpu' });
    const [first, second] = await Promise.all([client.request((id) => ({ type: 'close', id })), client.request((id) => ({ type: 'close', id }))]);
    expect([first.id, second.id]).toEqual([1, 2]);
    await worker.terminate();
  });

  it('rejects every pending request when the thread exits, and every later one', async () => {
    const worker = fakeThread('process.exit(7);');
    const client = new ThreadClient(worker);
    await client.ready;
    const pending = [client.request((id) => ({ type: 'close', id })), client.request((id) => ({ type: 'close', id }))];
    await expect(pending[0]).rejects.toThrow('session thread exited with code 7');
    await expect(pending[1]).rejects.toThrow('session thread exited with code 7');
    await expect(client.request((id) => ({ type: 'close', id }))).rejects.toThrow('exited with code 7');
  });

  it('rejects pending requests when the thread throws', async () => {
    const worker = fakeThread(`throw new Error('native kaboom');`);
    const client = new ThreadClient(worker);
    await client.ready;
    await expect(client.request((id) => ({ type: 'close', id }))).rejects.toThrow('session thread crashed: native kaboom');
  });

  it('fails `ready` with MODEL_LOAD_FAILED when the thread dies before loading', async () => {
    const worker = new Worker(`throw new Error('cannot start')`, { eval: true });
    const client = new ThreadClient(worker);
    const err = await client.ready.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelLoadError);
    expect(err).toMatchObject({ code: 'MODEL_LOAD_FAILED', message: expect.stringMatching(/cannot start/) });
  });
});
