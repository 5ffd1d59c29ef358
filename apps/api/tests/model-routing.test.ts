import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pickRoutedVersion } from '../src/services/models/models-service.ts';
import { buildTestApp, mlpInput, type TestApp } from './helpers.ts';

let t: TestApp;
let modelsKey: string;
beforeAll(async () => {
  t = await buildTestApp();
  // Two versions of the same model: v1 the stable one, v2 the canary.
  for (let i = 0; i < 2; i++) expect((await t.registerModel('mlp')).statusCode).toBe(201);
  modelsKey = await t.newKey({ scopes: ['jobs:read', 'models:write'] });
});
afterAll(() => t.close());

const putRouting = (versions: unknown, key = modelsKey, name = 'mlp') =>
  t.server.inject({
    method: 'PUT',
    url: `/v1/models/${name}/routing`,
    payload: { versions } as object,
    headers: { ...t.auth(key), 'x-request-id': 'req-routing' },
  });

/** Submits `count` jobs for `model` tagged with `phase`, and counts them by the version that recorded them. */
async function submitMany(
  phase: string,
  count: number,
  headers: (i: number) => Record<string, string> = () => ({}),
  model = 'mlp',
): Promise<Record<number, number>> {
  for (let start = 0; start < count; start += 50) {
    const batch = Array.from({ length: Math.min(50, count - start) }, (_, k) => start + k);
    const replies = await Promise.all(
      batch.map((i) =>
        t.server.inject({
          method: 'POST',
          url: '/v1/jobs',
          payload: { model, inputs: [mlpInput(1, i)], metadata: { phase, key: headers(i)['x-routing-key'] ?? '' } },
          headers: { ...t.auth(t.userKey), ...headers(i) },
        }),
      ),
    );
    for (const res of replies) expect(res.statusCode, res.body).toBe(202);
  }
  const { rows } = await t.ctx.pool.query<{ v: number; n: number }>(
    "SELECT model_version AS v, count(*)::int AS n FROM jobs WHERE metadata->>'phase' = $1 GROUP BY 1",
    [phase],
  );
  return Object.fromEntries(rows.map((r) => [r.v, r.n]));
}

describe('traffic split between model versions', () => {
  it('sends unversioned jobs to the latest version while there is no routing table', async () => {
    const routing = await t.server.inject({ method: 'GET', url: '/v1/models/mlp/routing', headers: t.auth(t.userKey) });
    expect(routing.statusCode).toBe(200);
    expect(routing.json()).toEqual({ name: 'mlp', versions: [], updatedAt: null });
    expect(await submitMany('none', 20)).toEqual({ 2: 20 });
  });

  it('splits 1,000 jobs near 90/10, and shows the table on the model views', async () => {
    const put = await putRouting([
      { version: 1, weight: 90 },
      { version: 2, weight: 10 },
    ]);
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({
      name: 'mlp',
      versions: [
        { version: 1, weight: 90 },
        { version: 2, weight: 10 },
      ],
      updatedAt: expect.any(String),
    });
    const split = await submitMany('split', 1_000);
    console.log(`90/10 split over 1000 jobs: v1 ${split[1]}, v2 ${split[2]}`);
    // Binomial(1000, 0.1) has a standard deviation under 10: these bounds are over 8 of them away.
    expect(split[1]).toBeGreaterThanOrEqual(800);
    expect(split[1]).toBeLessThanOrEqual(980);
    expect(split[2]).toBeGreaterThanOrEqual(20);
    expect(split[2]).toBeLessThanOrEqual(200);
    expect(split[1]! + split[2]!).toBe(1_000);

    const list = (await t.server.inject({ method: 'GET', url: '/v1/models', headers: t.auth(t.userKey) })).json();
    expect(list.items.find((m: { name: string }) => m.name === 'mlp').routing).toEqual([
      { version: 1, weight: 90 },
      { version: 2, weight: 10 },
    ]);
    const one = (await t.server.inject({ method: 'GET', url: '/v1/models/mlp', headers: t.auth(t.userKey) })).json();
    expect(one).toMatchObject({
      version: 2,
      routing: [
        { version: 1, weight: 90 },
        { version: 2, weight: 10 },
      ],
    });
  });

  it('never routes name:version', async () => {
    expect(await submitMany('pinned', 30, () => ({}), 'mlp:2')).toEqual({ 2: 30 });
  });

  it('sends every job with the same X-Routing-Key to the same version, and different keys to both', async () => {
    const sticky = await submitMany('sticky', 40, () => ({ 'x-routing-key': 'customer-42' }));
    expect(Object.values(sticky)).toEqual([40]);
    // Each key sticks to one version; over 200 keys both versions get some.
    await submitMany('keys', 400, (i) => ({ 'x-routing-key': `customer-${i % 200}` }));
    const { rows } = await t.ctx.pool.query<{ key: string; versions: number[] }>(
      "SELECT metadata->>'key' AS key, array_agg(DISTINCT model_version) AS versions FROM jobs WHERE metadata->>'phase' = 'keys' GROUP BY 1",
    );
    expect(rows).toHaveLength(200);
    expect(rows.filter((r) => r.versions.length !== 1)).toEqual([]);
    expect(new Set(rows.map((r) => r.versions[0]))).toEqual(new Set([1, 2]));
    const oversized = await t.server.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: { model: 'mlp', inputs: [mlpInput()] },
      headers: { ...t.auth(t.userKey), 'x-routing-key': 'k'.repeat(201) },
    });
    expect(oversized.statusCode).toBe(400);
    expect(oversized.json().code).toBe('VALIDATION_FAILED');
  });

  it('keeps each sticky key on its version across repeats of the same table', async () => {
    const versionOf = async (key: string, phase: string) => Object.keys(await submitMany(phase, 1, () => ({ 'x-routing-key': key }))).map(Number);
    const first = await Promise.all(Array.from({ length: 30 }, (_, i) => versionOf(`user-${i}`, `repeat-a-${i}`)));
    const again = await Promise.all(Array.from({ length: 30 }, (_, i) => versionOf(`user-${i}`, `repeat-b-${i}`)));
    expect(again).toEqual(first);
  });

  it('moves only the keys in the shifted range when weights change', () => {
    const points = Array.from({ length: 10_000 }, (_, i) => (i + 0.5) / 10_000);
    const before = points.map((p) =>
      pickRoutedVersion(
        [
          { version: 1, weight: 90 },
          { version: 2, weight: 10 },
        ],
        p,
      ),
    );
    const after = points.map((p) =>
      pickRoutedVersion(
        [
          { version: 1, weight: 80 },
          { version: 2, weight: 20 },
        ],
        p,
      ),
    );
    const moved = points.filter((_, i) => before[i] !== after[i]);
    expect(moved).toHaveLength(1_000);
    expect(moved.every((p, i) => p >= 0.8 && p < 0.9 && before[points.indexOf(p)] === 1)).toBe(true);
    // Scaling every weight alike moves nothing; a zero weight takes nothing.
    expect(
      points.map((p) =>
        pickRoutedVersion(
          [
            { version: 1, weight: 9 },
            { version: 2, weight: 1 },
          ],
          p,
        ),
      ),
    ).toEqual(before);
    expect(
      new Set(
        points.map((p) =>
          pickRoutedVersion(
            [
              { version: 1, weight: 0 },
              { version: 2, weight: 3 },
              { version: 3, weight: 0 },
            ],
            p,
          ),
        ),
      ),
    ).toEqual(new Set([2]));
  });

  it('promotes the canary to all traffic, then rolls back, in one call each', async () => {
    expect((await putRouting([{ version: 2, weight: 100 }])).statusCode).toBe(200);
    expect(await submitMany('promoted', 100)).toEqual({ 2: 100 });
    expect(
      (
        await putRouting([
          { version: 1, weight: 100 },
          { version: 2, weight: 0 },
        ])
      ).statusCode,
    ).toBe(200);
    expect(await submitMany('rolled-back', 100)).toEqual({ 1: 100 });
    // An empty table: no routing, the latest version serves.
    const cleared = await putRouting([]);
    expect(cleared.json()).toEqual({ name: 'mlp', versions: [], updatedAt: null });
    expect(await submitMany('cleared', 20)).toEqual({ 2: 20 });
  });

  it('refuses invalid tables with a problem and leaves the table as it was', async () => {
    expect(
      (
        await putRouting([
          { version: 1, weight: 50 },
          { version: 2, weight: 50 },
        ])
      ).statusCode,
    ).toBe(200);
    const cases: Array<[string, unknown, number, string]> = [
      ['unknown version', [{ version: 9, weight: 10 }], 400, '/body/versions/0/version'],
      [
        'duplicate version',
        [
          { version: 1, weight: 10 },
          { version: 1, weight: 20 },
        ],
        400,
        '/body/versions/1/version',
      ],
      [
        'all weights zero',
        [
          { version: 1, weight: 0 },
          { version: 2, weight: 0 },
        ],
        400,
        '/body/versions',
      ],
      ['negative weight', [{ version: 1, weight: -1 }], 400, '/body/versions/0/weight'],
      ['fractional weight', [{ version: 1, weight: 0.5 }], 400, '/body/versions/0/weight'],
      ['version 0', [{ version: 0, weight: 1 }], 400, '/body/versions/0/version'],
      ['extra field', [{ version: 1, weight: 1, note: 'x' }], 400, '/body/versions/0'],
      ['not a list', { version: 1 }, 400, '/body/versions'],
    ];
    for (const [what, versions, status, pointer] of cases) {
      const res = await putRouting(versions);
      expect(res.statusCode, what).toBe(status);
      expect(res.headers['content-type'], what).toMatch(/^application\/problem\+json/);
      expect(res.json().code, what).toBe('VALIDATION_FAILED');
      expect(res.json().errors?.[0]?.pointer, what).toContain(pointer);
    }
    const unknownModel = await putRouting([{ version: 1, weight: 1 }], modelsKey, 'absent');
    expect(unknownModel.statusCode).toBe(404);
    expect(unknownModel.json().code).toBe('MODEL_NOT_FOUND');
    expect((await t.server.inject({ method: 'GET', url: '/v1/models/absent/routing', headers: t.auth() })).statusCode).toBe(404);
    expect((await t.server.inject({ method: 'GET', url: '/v1/models/mlp:1/routing', headers: t.auth() })).statusCode).toBe(400);
    const table = (await t.server.inject({ method: 'GET', url: '/v1/models/mlp/routing', headers: t.auth() })).json();
    expect(table.versions).toEqual([
      { version: 1, weight: 50 },
      { version: 2, weight: 50 },
    ]);
  });

  it('answers 403 to a key without models:write', async () => {
    const res = await putRouting([{ version: 2, weight: 100 }], t.userKey);
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('FORBIDDEN');
  });

  it('records every change in the audit log with the table it replaced', async () => {
    const actor = (await t.server.inject({ method: 'GET', url: '/v1/me', headers: t.auth(modelsKey) })).json().keyId;
    const audit = (await t.server.inject({ method: 'GET', url: '/v1/audit?limit=500', headers: t.auth() })).json();
    const routed = audit.items.filter((e: { action: string }) => e.action === 'model:routed').reverse();
    expect(routed.map((e: { details: { versions: unknown } }) => e.details.versions)).toEqual([
      [
        { version: 1, weight: 90 },
        { version: 2, weight: 10 },
      ],
      [{ version: 2, weight: 100 }],
      [
        { version: 1, weight: 100 },
        { version: 2, weight: 0 },
      ],
      [],
      [
        { version: 1, weight: 50 },
        { version: 2, weight: 50 },
      ],
    ]);
    expect(routed[1]).toMatchObject({
      resource: 'models/mlp',
      actorKeyId: actor,
      details: {
        requestId: 'req-routing',
        previous: [
          { version: 1, weight: 90 },
          { version: 2, weight: 10 },
        ],
      },
    });
    expect(routed[0].details.previous).toEqual([]);
  });
});
