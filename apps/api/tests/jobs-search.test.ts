import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, mlpInput, type TestApp } from './helpers.ts';

let t: TestApp;
const ids: Record<string, string> = {};
let aliceKeyId: string;

const list = async (query: string, key?: string): Promise<string[]> => {
  const res = await t.server.inject({ method: 'GET', url: `/v1/jobs?${query}`, headers: t.auth(key) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().items.map((j: { id: string }) => j.id);
};

beforeAll(async () => {
  t = await buildTestApp();
  expect((await t.registerModel('mlp')).statusCode).toBe(201);
  const alice = await t.newKey();
  const bob = await t.newKey();
  for (const [name, key] of [
    ['aliceOk', alice],
    ['aliceOom', alice],
    ['bobLoad', bob],
    ['bobPercent', bob],
  ] as const) {
    const res = await t.server.inject({ method: 'POST', url: '/v1/jobs', payload: { model: 'mlp', inputs: [mlpInput()] }, headers: t.auth(key) });
    ids[name] = res.json().id;
  }
  const fail = (id: string, code: string, message: string) =>
    t.ctx.pool.query(`UPDATE jobs SET status = 'failed', error_code = $2, error_message = $3, finished_at = now() WHERE id = $1`, [id, code, message]);
  await fail(ids.aliceOom!, 'INFERENCE_FAILED', 'CUDA out of memory while allocating 2 GiB');
  await fail(ids.bobLoad!, 'MODEL_LOAD_FAILED', 'S3 credentials missing on worker w-7');
  await fail(ids.bobPercent!, 'INFERENCE_FAILED', 'input at 100%_capacity');
  const { rows } = await t.ctx.pool.query<{ owner_key_id: string }>('SELECT owner_key_id FROM jobs WHERE id = $1', [ids.aliceOk]);
  aliceKeyId = rows[0]!.owner_key_id;
});
afterAll(() => t.close());

describe('GET /v1/jobs search', () => {
  it('finds a job by its id or a prefix of it, dashed or not', async () => {
    const id = ids.bobLoad!;
    expect(await list(`id=${id}`)).toEqual([id]);
    expect(await list(`id=${id.slice(0, 13)}`)).toContain(id);
    expect(await list(`id=${id.replace(/-/g, '').slice(0, 14)}`)).toContain(id);
    for (const bad of ['xyz', '0190a1b2-x', `${id}0`]) {
      const res = await t.server.inject({ method: 'GET', url: `/v1/jobs?id=${bad}`, headers: t.auth() });
      expect(res.statusCode, bad).toBe(400);
    }
  });

  it("finds an API key's jobs, within the caller's own scope", async () => {
    expect(new Set(await list(`keyId=${aliceKeyId}`))).toEqual(new Set([ids.aliceOk, ids.aliceOom]));
    // Another key asking for alice's jobs sees only its own, which are none of hers.
    expect(await list(`keyId=${aliceKeyId}`, t.userKey)).toEqual([]);
  });

  it('finds failed jobs by error code and by text of the message, wildcards taken literally', async () => {
    expect(new Set(await list('errorCode=INFERENCE_FAILED'))).toEqual(new Set([ids.aliceOom, ids.bobPercent]));
    expect(await list('errorCode=INFERENCE_FAILED&keyId=' + aliceKeyId)).toEqual([ids.aliceOom]);
    expect(await list('errorText=out%20of%20MEMORY')).toEqual([ids.aliceOom]);
    expect(await list('errorText=100%25_')).toEqual([ids.bobPercent]);
    expect(await list('errorText=100%25x')).toEqual([]);
    expect(await list('errorText=_')).toEqual([ids.bobPercent]);
  });

  it('shows the error code in the list', async () => {
    const res = await t.server.inject({ method: 'GET', url: `/v1/jobs?id=${ids.bobLoad}`, headers: t.auth() });
    expect(res.json().items[0]).toMatchObject({ status: 'failed', error: { code: 'MODEL_LOAD_FAILED' } });
  });
});
