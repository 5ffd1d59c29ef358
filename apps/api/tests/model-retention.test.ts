import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, demoModelBytes, type TestApp } from './helpers.ts';

const DAY_S = 86_400;
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ jobRetentionS: 7 * DAY_S, inputRetentionS: 3_600 });
  const mlp = await demoModelBytes('mlp');
  for (const name of ['mlp', 'mlp', 'other']) expect((await t.registerModel(name, mlp)).statusCode).toBe(201);
});
afterAll(() => t.close());

const get = async (url: string, key = t.userKey) => {
  const res = await t.server.inject({ method: 'GET', url, headers: t.auth(key) });
  expect(res.statusCode, url).toBe(200);
  return res.json();
};
const patch = (name: string, retentionS: number | null) =>
  t.server.inject({ method: 'PATCH', url: `/v1/models/${name}`, headers: t.auth(), payload: { retentionS } });

describe('a model read shows its retention', () => {
  it("shows the server's default without an override, to any reader", async () => {
    expect((await get('/v1/models/mlp')).retention).toEqual({ retentionS: null, effectiveS: 7 * DAY_S, source: 'default', inputRetentionS: 3_600 });
  });

  it('shows the override on every read of the name once set, and the default again once cleared', async () => {
    const set = await patch('mlp', 2 * DAY_S);
    expect(set.statusCode).toBe(200);
    expect(set.json()).toMatchObject({ name: 'mlp', retentionS: 2 * DAY_S, effectiveS: 2 * DAY_S, source: 'model', inputRetentionS: 3_600 });
    const expected = { retentionS: 2 * DAY_S, effectiveS: 2 * DAY_S, source: 'model', inputRetentionS: 3_600, updatedAt: set.json().updatedAt };
    expect((await get('/v1/models/mlp')).retention).toEqual(expected);
    expect((await get('/v1/models/mlp:1')).retention).toEqual(expected);
    expect((await get('/v1/models/mlp/versions')).items.map((m: { retention: unknown }) => m.retention)).toEqual([expected, expected]);
    const list = (await get('/v1/models')).items;
    expect(Object.fromEntries(list.map((m: { name: string; retention: { source: string } }) => [m.name, m.retention.source]))).toEqual({
      mlp: 'model',
      other: 'default',
    });

    expect((await patch('mlp', null)).json()).toMatchObject({ retentionS: null, effectiveS: 7 * DAY_S, source: 'default', updatedAt: null });
    expect((await get('/v1/models/mlp')).retention).toEqual({ retentionS: null, effectiveS: 7 * DAY_S, source: 'default', inputRetentionS: 3_600 });
  });

  it('leaves out the input retention when the job itself is purged no later', async () => {
    expect((await patch('other', 600)).statusCode).toBe(200);
    expect((await get('/v1/models/other')).retention).toMatchObject({ effectiveS: 600, inputRetentionS: null });
  });
});
