import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers.ts';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const createKey = (payload: object) => t.server.inject({ method: 'POST', url: '/v1/keys', payload, headers: t.auth() });
const me = async (key: string) => (await t.server.inject({ method: 'GET', url: '/v1/me', headers: t.auth(key) })).json();
const listed = async (id: string) =>
  (await t.server.inject({ method: 'GET', url: '/v1/keys', headers: t.auth() })).json().items.find((k: { id: string }) => k.id === id);

describe('API key weights', () => {
  it('gives a key weight 1 unless told otherwise', async () => {
    const res = await createKey({ name: 'default-share' });
    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created.weight).toBe(1);
    expect(await me(created.secret)).toMatchObject({ keyId: created.id, weight: 1 });
    expect(await listed(created.id)).toMatchObject({ weight: 1 });
    expect(await me(t.adminKey)).toMatchObject({ admin: true, weight: 1 });
  });

  it('stores a chosen weight and shows it on the key, the list and /v1/me', async () => {
    const res = await createKey({ name: 'heavy', weight: 5 });
    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created).toMatchObject({ name: 'heavy', weight: 5 });
    expect(await listed(created.id)).toMatchObject({ weight: 5 });
    expect(await me(created.secret)).toMatchObject({ keyId: created.id, weight: 5 });
    const [row] = (await t.ctx.pool.query('SELECT weight FROM api_keys WHERE id = $1', [created.id])).rows;
    expect(row).toEqual({ weight: 5 });
  });

  it('accepts the bounds and refuses anything else with 400 VALIDATION_FAILED at /body/weight', async () => {
    for (const weight of [1, 1000]) expect((await createKey({ name: `edge-${weight}`, weight })).json()).toMatchObject({ weight });
    for (const weight of [0, -1, 1001, 2.5, 'x', '0', null, 1e308]) {
      const res = await createKey({ name: 'bad-weight', weight });
      expect(res.statusCode, JSON.stringify(weight)).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [expect.objectContaining({ pointer: '/body/weight' })] });
    }
  });

  it('is refused by the database outside 1..1000 too', async () => {
    const { id } = (await createKey({ name: 'checked' })).json();
    await expect(t.ctx.pool.query('UPDATE api_keys SET weight = 0 WHERE id = $1', [id])).rejects.toThrow(/api_keys_weight_check/);
  });

  it('is written to the audit log with the key', async () => {
    const { id } = (await createKey({ name: 'audited-weight', weight: 3 })).json();
    const audit = (await t.server.inject({ method: 'GET', url: '/v1/audit', headers: t.auth() })).json();
    expect(audit.items.find((e: { resource: string }) => e.resource === `keys/${id}`)).toMatchObject({
      action: 'key:created',
      details: { name: 'audited-weight', weight: 3 },
    });
  });
});
