import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCarriedInputs, queueKey } from '@inferq/queue';
import { inputSegmentKey } from '@inferq/storage';
import type { StoredTensor } from '@inferq/contracts';
import { buildTestApp, mlpInput, type TestApp } from './helpers.ts';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
  expect((await t.registerModel('mlp')).statusCode).toBe(201);
});
afterAll(() => t.close());

/** The payload a queue job carries (BullMQ's job hash keeps it as JSON); undefined when no queue job has the id. */
const queuedPayload = async (app: TestApp, id: string) => {
  const data = await app.redis.hget(queueKey(app.producer.prefix, 'mlp', id), 'data');
  return data === null ? undefined : JSON.parse(data);
};

const submit = (body: unknown, key?: string, headers: Record<string, string> = {}) =>
  t.server.inject({ method: 'POST', url: '/v1/jobs', payload: body as object, headers: { ...t.auth(key), ...headers } });

describe('POST /v1/jobs', () => {
  it('accepts a valid job with 202 and records it as queued', async () => {
    const res = await submit({ model: 'mlp', inputs: [mlpInput()], priority: 'high' });
    expect(res.statusCode).toBe(202);
    const { id, status, links } = res.json();
    expect(status).toBe('queued');
    expect(links.self).toBe(`/v1/jobs/${id}`);
    const job = await t.server.inject({ method: 'GET', url: `/v1/jobs/${id}`, headers: t.auth() });
    expect(job.statusCode).toBe(200);
    expect(job.json()).toMatchObject({ id, model: 'mlp', modelVersion: 1, priority: 'high', status: 'queued', attempts: 0 });
    const queued = await t.ctx.pool.query('SELECT status FROM jobs WHERE id = $1', [id]);
    expect(queued.rows[0].status).toBe('queued');
  });

  it('queues the batch key and, within QUEUE_CARRIED_INPUTS_MB, the inline inputs; the record keeps them too, in a segment (invariant 5)', async () => {
    const { id } = (await submit({ model: 'mlp', inputs: [mlpInput(2)] })).json();
    const payload = await queuedPayload(t, id);
    const { rows } = await t.ctx.pool.query<{ inputs: StoredTensor[]; input_data: Buffer | null }>('SELECT inputs, input_data FROM jobs WHERE id = $1', [id]);
    const carried = [{ name: 'features', datatype: 'FP32', shape: [2, 64], bytes: 512, at: 0 }];
    expect(payload).toEqual({ modelVersion: 1, batchKey: 'features:64', priority: 'normal', inputs: carried });
    const [bytes] = await createCarriedInputs(t.redis, t.producer.prefix).take('mlp', [id]);
    const { segment, offset } = rows[0]!.inputs[0]!;
    expect(rows[0]!.input_data).toBeNull();
    expect(Buffer.from(await t.ctx.storage.getObjectRange(inputSegmentKey(segment!), offset!, 512))).toEqual(bytes);
  });

  it('carries inputs kept in S3 too, from the bytes the request holds: the worker then reads no object for them', async () => {
    const input = mlpInput(80); // 20,480 bytes: above the app's INLINE_TENSOR_MAX_BYTES (16 KiB), so kept in S3
    const { id } = (await submit({ model: 'mlp', inputs: [input] })).json();
    const { rows } = await t.ctx.pool.query<{ inputs: Array<{ key?: string }> }>('SELECT inputs FROM jobs WHERE id = $1', [id]);
    const key = rows[0]!.inputs[0]!.key;
    expect(key).toBeDefined();
    expect((await queuedPayload(t, id))?.inputs).toEqual([{ name: 'features', datatype: 'FP32', shape: [80, 64], bytes: 20_480, at: 0 }]);
    const [bytes] = await createCarriedInputs(t.redis, t.producer.prefix).take('mlp', [id]);
    expect(bytes).toEqual(Buffer.from(await t.ctx.storage.getObject(key!)));
    expect(new Float32Array(bytes!.buffer, bytes!.byteOffset, 80 * 64)[5]).toBeCloseTo(input.data[5]!, 6);
  });

  it('carries no inputs with QUEUE_CARRIED_INPUTS_MB=0', async () => {
    const off = await buildTestApp({ queueCarriedInputsMb: 0 });
    try {
      expect((await off.registerModel('mlp')).statusCode).toBe(201);
      const res = await off.server.inject({ method: 'POST', url: '/v1/jobs', payload: { model: 'mlp', inputs: [mlpInput(2)] }, headers: off.auth() });
      expect(await queuedPayload(off, res.json().id)).toEqual({ modelVersion: 1, batchKey: 'features:64', priority: 'normal' });
      expect(await createCarriedInputs(off.redis, off.producer.prefix).take('mlp', [res.json().id])).toEqual([null]);
    } finally {
      await off.close();
    }
  });

  it('accepts base64 little-endian data and name:version references', async () => {
    const values = new Float32Array(64).fill(0.25);
    const res = await submit({
      model: 'mlp:1',
      inputs: [{ name: 'features', datatype: 'FP32', shape: [1, 64], data: Buffer.from(values.buffer).toString('base64') }],
    });
    expect(res.statusCode).toBe(202);
  });

  it('returns the same job for a repeated Idempotency-Key, and 409 when the request differs', async () => {
    const body = { model: 'mlp', inputs: [mlpInput(1, 3)] };
    const first = await submit(body, undefined, { 'idempotency-key': 'abc-1' });
    const second = await submit(body, undefined, { 'idempotency-key': 'abc-1' });
    expect(first.statusCode).toBe(202);
    expect(second.statusCode).toBe(202);
    expect(second.json().id).toBe(first.json().id);
    const other = await submit({ model: 'mlp', inputs: [mlpInput(1, 4)] }, undefined, { 'idempotency-key': 'abc-1' });
    expect(other.statusCode).toBe(409);
    expect(other.json().code).toBe('IDEMPOTENCY_CONFLICT');
    const rows = await t.ctx.pool.query("SELECT count(*)::int AS n FROM jobs WHERE idempotency_key = 'abc-1'");
    expect(rows.rows[0].n).toBe(1);
  });

  it('scopes idempotency keys per API key', async () => {
    const body = { model: 'mlp', inputs: [mlpInput(1, 5)] };
    const a = await submit(body, t.adminKey, { 'idempotency-key': 'shared' });
    const b = await submit(body, t.userKey, { 'idempotency-key': 'shared' });
    expect(a.json().id).not.toBe(b.json().id);
  });
});

describe('cancel', () => {
  it('cancels a queued job, removes its queue entry, and refuses to cancel it again as running', async () => {
    const { id } = (await submit({ model: 'mlp', inputs: [mlpInput()] })).json();
    const res = await t.server.inject({ method: 'POST', url: `/v1/jobs/${id}/cancel`, headers: t.auth() });
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('canceled');
    const again = await t.server.inject({ method: 'POST', url: `/v1/jobs/${id}/cancel`, headers: t.auth() });
    expect(again.json().status).toBe('canceled');
    await t.ctx.pool.query("UPDATE jobs SET status = 'running' WHERE id = (SELECT id FROM jobs WHERE status = 'queued' LIMIT 1)");
    const running = (await t.ctx.pool.query("SELECT id FROM jobs WHERE status = 'running' LIMIT 1")).rows[0].id;
    const refused = await t.server.inject({ method: 'POST', url: `/v1/jobs/${running}/cancel`, headers: t.auth() });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().code).toBe('JOB_NOT_CANCELABLE');
  });
});

describe('tenancy', () => {
  it("hides one key's jobs from another: 404 on get and cancel, absent from lists", async () => {
    const { id } = (await submit({ model: 'mlp', inputs: [mlpInput()] }, t.userKey)).json();
    const other = await t.newKey();
    for (const req of [
      { method: 'GET' as const, url: `/v1/jobs/${id}` },
      { method: 'POST' as const, url: `/v1/jobs/${id}/cancel` },
    ]) {
      const res = await t.server.inject({ ...req, headers: t.auth(other) });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('JOB_NOT_FOUND');
    }
    const list = await t.server.inject({ method: 'GET', url: '/v1/jobs', headers: t.auth(other) });
    expect(list.json().items).toEqual([]);
    const own = await t.server.inject({ method: 'GET', url: `/v1/jobs/${id}`, headers: t.auth(t.userKey) });
    expect(own.statusCode).toBe(200);
  });

  it('requires a valid key on every /v1 route', async () => {
    for (const url of ['/v1/jobs', '/v1/models']) {
      const none = await t.server.inject({ method: 'GET', url });
      expect(none.statusCode).toBe(401);
      expect(none.json().code).toBe('UNAUTHENTICATED');
      const bad = await t.server.inject({ method: 'GET', url, headers: { authorization: 'Bearer iq_AAAAAAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBB' } });
      expect(bad.statusCode).toBe(401);
    }
    const forbidden = await t.server.inject({ method: 'POST', url: '/v1/keys', payload: { name: 'x' }, headers: t.auth(t.userKey) });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json().code).toBe('FORBIDDEN');
  });
});

describe('GET /v1/jobs', () => {
  it('pages with a cursor, newest first, and filters', async () => {
    const key = await t.newKey();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await submit({ model: 'mlp', inputs: [mlpInput()], priority: i % 2 ? 'low' : 'normal' }, key)).json().id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: Awaited<ReturnType<typeof t.server.inject>> = await t.server.inject({
        method: 'GET',
        url: `/v1/jobs?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        headers: t.auth(key),
      });
      expect(res.statusCode).toBe(200);
      seen.push(...res.json().items.map((j: { id: string }) => j.id));
      cursor = res.json().nextCursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
    const low = await t.server.inject({ method: 'GET', url: '/v1/jobs?priority=low', headers: t.auth(key) });
    expect(low.json().items).toHaveLength(2);
    const bad = await t.server.inject({ method: 'GET', url: '/v1/jobs?cursor=nope', headers: t.auth(key) });
    expect(bad.statusCode).toBe(400);
  });
});
