import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeTensorBase64 } from '@inferq/contracts';
import { buildTestApp, demoModelBytes, mlpInput, type TestApp } from './helpers.ts';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
  const mlp = await demoModelBytes('mlp');
  expect((await t.registerModel('cached', mlp, { responseCache: 'true' })).statusCode).toBe(201);
  expect((await t.registerModel('uncached', mlp)).statusCode).toBe(201);
  expect((await t.registerModel('encoder', await demoModelBytes('transformer'), { responseCache: 'true' })).statusCode).toBe(201);
});
afterAll(() => t.close());

const submit = (body: object, headers: Record<string, string> = {}) =>
  t.server.inject({ method: 'POST', url: '/v1/jobs', payload: body, headers: { ...t.auth(t.userKey), ...headers } });
const getJob = async (id: string) => (await t.server.inject({ method: 'GET', url: `/v1/jobs/${id}`, headers: t.auth(t.userKey) })).json();

/** Stands in for the worker: the job succeeds with one inline output. */
async function finish(id: string, value: number): Promise<void> {
  const output = { name: 'out', datatype: 'FP32', shape: [1, 1], bytes: 4, b64: encodeTensorBase64(new Uint8Array(new Float32Array([value]).buffer)) };
  await t.ctx.pool.query(
    "UPDATE jobs SET status = 'succeeded', outputs = $2, started_at = now(), finished_at = now(), queue_ms = 3, infer_ms = 1.5 WHERE id = $1",
    [id, JSON.stringify([output])],
  );
}

describe('response cache', () => {
  it('is off unless the upload asks for it, and the model views say which', async () => {
    const list = (await t.server.inject({ method: 'GET', url: '/v1/models', headers: t.auth(t.userKey) })).json();
    expect(Object.fromEntries(list.items.map((m: { name: string; responseCache: boolean }) => [m.name, m.responseCache]))).toEqual({
      cached: true,
      uncached: false,
      encoder: true,
    });
    const bad = await t.registerModel('cached', await demoModelBytes('mlp'), { responseCache: 'sometimes' });
    expect(bad.statusCode).toBe(400);
  });

  it('answers equal inputs with the stored result of the succeeded job, without queueing, and misses on other inputs', async () => {
    const first = await submit({ model: 'cached', inputs: [mlpInput(1, 11)] });
    expect(first.statusCode).toBe(202);
    expect(first.json().status).toBe('queued');
    // Queued is not a result: the same inputs queue again until one has succeeded.
    const whileQueued = await submit({ model: 'cached', inputs: [mlpInput(1, 11)] });
    expect(whileQueued.json().status).toBe('queued');
    await finish(first.json().id, 42);

    const backlogBefore = await t.producer.backlog('cached');
    const hit = await submit({ model: 'cached', inputs: [mlpInput(1, 11)], metadata: { try: 'again' } });
    expect(hit.statusCode, hit.body).toBe(202);
    expect(hit.json().status).toBe('succeeded');
    const job = await getJob(hit.json().id);
    expect(job).toMatchObject({
      status: 'succeeded',
      cacheHit: true,
      model: 'cached',
      modelVersion: 1,
      metadata: { try: 'again' },
      queueMs: null,
      inferMs: null,
      batchSize: null,
    });
    expect(job.outputs).toEqual([{ name: 'out', datatype: 'FP32', shape: [1, 1], bytes: 4, data: [42] }]);
    expect(job.inputs).toEqual([{ name: 'features', datatype: 'FP32', shape: [1, 64], bytes: 256 }]);
    expect(await t.producer.backlog('cached')).toBe(backlogBefore);
    // The source job itself was a miss.
    expect((await getJob(first.json().id)).cacheHit).toBe(false);

    // The same numbers sent as base64 are the same bytes: a hit.
    const asBase64 = { ...mlpInput(1, 11), data: encodeTensorBase64(new Uint8Array(new Float32Array(mlpInput(1, 11).data).buffer)) };
    expect((await submit({ model: 'cached', inputs: [asBase64] })).json().status).toBe('succeeded');
    expect((await submit({ model: 'cached', inputs: [mlpInput(1, 12)] })).json().status).toBe('queued');
    expect((await submit({ model: 'cached', inputs: [mlpInput(2, 11)] })).json().status).toBe('queued');
  });

  it('keys on the exact version, and leaves models without the cache alone', async () => {
    const v1 = await submit({ model: 'uncached', inputs: [mlpInput(1, 21)] });
    await finish(v1.json().id, 1);
    expect((await submit({ model: 'uncached', inputs: [mlpInput(1, 21)] })).json().status).toBe('queued');

    const source = await submit({ model: 'cached:1', inputs: [mlpInput(1, 22)] });
    await finish(source.json().id, 2);
    expect((await t.registerModel('cached', await demoModelBytes('mlp'), { responseCache: 'true' })).statusCode).toBe(201);
    expect((await submit({ model: 'cached:2', inputs: [mlpInput(1, 22)] })).json().status).toBe('queued');
    expect((await submit({ model: 'cached:1', inputs: [mlpInput(1, 22)] })).json().status).toBe('succeeded');
  });

  it('hashes the input set, not the order the request lists it in', async () => {
    const ids = { name: 'input_ids', datatype: 'INT64', shape: [1, 4], data: [5, 6, 7, 8] };
    const mask = { name: 'attention_mask', datatype: 'INT64', shape: [1, 4], data: [1, 1, 1, 0] };
    const first = await submit({ model: 'encoder', inputs: [ids, mask] });
    await finish(first.json().id, 7);
    expect((await submit({ model: 'encoder', inputs: [mask, ids] })).json().status).toBe('succeeded');
    expect((await submit({ model: 'encoder', inputs: [ids, { ...mask, data: [1, 1, 1, 1] }] })).json().status).toBe('queued');
  });

  it('keeps idempotency keys and tenants apart, and counts hits and misses', async () => {
    const source = await submit({ model: 'cached:1', inputs: [mlpInput(1, 31)] });
    await finish(source.json().id, 3);
    const keyed = await submit({ model: 'cached:1', inputs: [mlpInput(1, 31)] }, { 'idempotency-key': 'cache-1' });
    const again = await submit({ model: 'cached:1', inputs: [mlpInput(1, 31)] }, { 'idempotency-key': 'cache-1' });
    expect(keyed.json().status).toBe('succeeded');
    expect(again.json().id).toBe(keyed.json().id);

    // Another tenant gets the result as its own job; the source job stays invisible to it.
    const other = await t.newKey();
    const theirs = await t.server.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: { model: 'cached:1', inputs: [mlpInput(1, 31)] },
      headers: t.auth(other),
    });
    expect(theirs.json().status).toBe('succeeded');
    expect((await t.server.inject({ method: 'GET', url: `/v1/jobs/${source.json().id}`, headers: t.auth(other) })).statusCode).toBe(404);

    const metrics = (await t.server.inject({ method: 'GET', url: '/metrics', headers: t.auth() })).body;
    expect(metrics).toMatch(/inferq_response_cache_lookups_total\{model="cached",result="hit"\} [1-9]/);
    expect(metrics).toMatch(/inferq_response_cache_lookups_total\{model="cached",result="miss"\} [1-9]/);
    expect(metrics).not.toMatch(/inferq_response_cache_lookups_total\{model="uncached"/);
  });
});
