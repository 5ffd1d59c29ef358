// Hostile input (reliability promise 5): thousands of generated malformed
// requests at every route. Each must get a 4xx problem+json with a catalogued
// code (a 2xx only when the request was valid), never a 5xx or a hang, and no
// other tenant's rows may change. A failure prints fast-check's seed and the
// shrunk request; replay it with FUZZ_SEED=<seed>.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCatalogue, isErrorCode } from '@inferq/contracts';
import { buildTestApp, demoModelBytes, mlpInput, multipartBody, type TestApp } from './helpers.ts';
import { TYPED_MODEL, allTypesModel } from './fuzz/typed-bodies.ts';
import { ROUTE_FUZZERS, badAuthorization, noiseHeaders, unroutedRequest, type FuzzCase, type FuzzWorld } from './fuzz/route-fuzzers.ts';

/** FUZZ_RUNS scales every family's run count (0.1 for a smoke run, 10 for a long hunt); FUZZ_SEED replays a failure. */
const RUN_SCALE = Number(process.env.FUZZ_RUNS ?? 1);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);

/** Runs per route family; routes not listed get DEFAULT_RUNS. */
const RUNS: Record<string, number> = {
  'POST /v1/jobs': 2_500,
  'POST /v1/models': 500,
  'GET /v1/jobs': 400,
  'GET /v1/jobs/:id': 150,
  'GET /v1/models/:name': 100,
  'POST /v1/keys': 100,
  'GET /v1/audit': 100,
  'GET /v1/stats': 100,
};
const DEFAULT_RUNS = 60;
const HEAD_RUNS = 20;
/** A request that takes longer than this counts as a hang. */
const REQUEST_TIMEOUT_MS = 10_000;

const OTHER_MODEL = 'tenant-b-model';
const OTHER_IDEMPOTENCY_KEY = 'tenant-b-key-1';

let t: TestApp;
let world: FuzzWorld;
let otherKeyId: string;
let snapshotBefore: string;
/** Answers by status class, shrinking runs included: proof that valid requests got through too. */
const answered = new Map<string, number>();

/** Every row the other tenant owns, in a stable order. */
async function otherTenantRows(): Promise<string> {
  const q = async (sql: string) => (await t.ctx.pool.query(sql, [otherKeyId])).rows;
  return JSON.stringify({
    jobs: await q('SELECT * FROM jobs WHERE owner_key_id = $1 ORDER BY id'),
    models: await q('SELECT * FROM models WHERE created_by = $1 ORDER BY id'),
    key: await q('SELECT * FROM api_keys WHERE id = $1'),
  });
}

beforeAll(async () => {
  t = await buildTestApp();
  for (const name of ['mlp', 'transformer']) expect((await t.registerModel(name)).statusCode).toBe(201);
  expect((await t.registerModel(TYPED_MODEL, allTypesModel())).statusCode).toBe(201);
  // The other tenant: a key with every scope but admin, a model and jobs of its own.
  const otherKey = await t.newKey({ scopes: ['jobs:read', 'jobs:write', 'models:write'] });
  otherKeyId = (await t.server.inject({ method: 'GET', url: '/v1/me', headers: t.auth(otherKey) })).json().keyId;
  const upload = multipartBody({ name: OTHER_MODEL }, { name: 'b.onnx', bytes: await demoModelBytes('mlp') });
  expect(
    (await t.server.inject({ method: 'POST', url: '/v1/models', payload: upload.payload, headers: { ...upload.headers, ...t.auth(otherKey) } })).statusCode,
  ).toBe(201);
  const submit = async (key: string, body: object, headers: Record<string, string> = {}) => {
    const res = await t.server.inject({ method: 'POST', url: '/v1/jobs', payload: body, headers: { ...t.auth(key), ...headers } });
    expect(res.statusCode).toBe(202);
    return res.json().id as string;
  };
  const otherJobIds = [
    await submit(otherKey, { model: 'mlp', inputs: [mlpInput(1, 1)], metadata: { team: 'b' } }, { 'idempotency-key': OTHER_IDEMPOTENCY_KEY }),
    await submit(otherKey, { model: OTHER_MODEL, inputs: [mlpInput(2, 2)], webhook: { url: 'http://127.0.0.1:9/b' } }),
    await submit(otherKey, { model: 'mlp', inputs: [mlpInput(1, 3)], priority: 'high' }),
  ];
  expect((await t.server.inject({ method: 'POST', url: `/v1/jobs/${otherJobIds[2]}/cancel`, headers: t.auth(otherKey) })).statusCode).toBe(200);
  // The fuzzing key: not admin, but allowed to write jobs and models.
  const fuzzKey = await t.newKey({ scopes: ['jobs:read', 'jobs:write', 'models:write'] });
  expect((await t.server.inject({ method: 'GET', url: '/v1/me', headers: t.auth(fuzzKey) })).json().admin).toBe(false);
  const ownJobIds = [await submit(fuzzKey, { model: 'mlp', inputs: [mlpInput(1, 4)] }), await submit(fuzzKey, { model: 'mlp', inputs: [mlpInput(1, 5)] })];
  world = { ownJobIds, otherJobIds, otherIdempotencyKey: OTHER_IDEMPOTENCY_KEY, otherModelName: OTHER_MODEL, modelBytes: await demoModelBytes('mlp'), fuzzKey };
  snapshotBefore = await otherTenantRows();
});
afterAll(() => t?.close());

async function send(c: FuzzCase) {
  const key = c.as === 'admin' ? t.adminKey : c.as === 'fuzzer' ? world.fuzzKey : undefined;
  const headers = { ...c.headers, ...(key && { authorization: `Bearer ${key}` }) };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)), REQUEST_TIMEOUT_MS);
  });
  try {
    return await Promise.race([t.server.inject({ method: c.method as 'GET', url: c.url, headers, payload: c.payload }), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function parseJson(text: string): { code?: unknown; status?: unknown } | undefined {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The property every request must satisfy. */
async function answersWell(c: FuzzCase): Promise<void> {
  const res = await send(c);
  const status = res.statusCode;
  const kind = c.waits && status === 503 ? '503 to Prefer: wait' : `${String(status).slice(0, 1)}xx`;
  answered.set(kind, (answered.get(kind) ?? 0) + 1);
  const where = `${c.method} ${c.url.slice(0, 200)} [${c.label}] → ${status} ${res.body.slice(0, 300)}`;
  const problem = status >= 400 && c.method !== 'HEAD' ? parseJson(res.body) : undefined;
  if (status >= 500) {
    // The one 5xx a valid request may get here: it asked to wait and no worker runs.
    expect(c.waits && status === 503 && problem?.code === 'MODEL_UNAVAILABLE', where).toBe(true);
    return;
  }
  if (c.expect === 'reject') expect(status, where).toBeGreaterThanOrEqual(400);
  if (c.expect === 'accept') expect(status, where).toBeLessThan(300);
  if (status >= 400 && c.method !== 'HEAD') {
    expect(res.headers['content-type'], where).toMatch(/^application\/problem\+json/);
    expect(isErrorCode(problem?.code), where).toBe(true);
    expect(ErrorCatalogue[problem!.code as keyof typeof ErrorCatalogue].status, where).toBe(status);
    expect(problem!.status, where).toBe(status);
  }
  // The fuzzing key must never see the other tenant's jobs or key id, unless the request named them (a 404 may echo the id).
  const named = `${c.url} ${c.payload ?? ''}`;
  if (c.as !== 'admin')
    for (const secret of [...world.otherJobIds, otherKeyId]) expect(!named.includes(secret) && res.body.includes(secret), where).toBe(false);
}

/** Runs one family; a failure is collected (with fast-check's seed and shrunk request) so every family still runs. */
async function fuzz(name: string, arb: fc.Arbitrary<FuzzCase>, numRuns: number, failures: string[]): Promise<void> {
  const result = await fc.check(fc.asyncProperty(arb, answersWell), { numRuns: Math.max(1, Math.round(numRuns * RUN_SCALE)), seed: SEED });
  if (result.failed) failures.push(`${name}: ${String(result.errorInstance).slice(0, 600)}\n${(fc.defaultReportMessage(result) ?? '').slice(0, 3000)}`);
}

describe('hostile input on every route', () => {
  const routeKey = (r: { method: string; url: string }) => `${r.method} ${r.url}`;
  const generatorFor = (r: { method: string; url: string }) => ROUTE_FUZZERS[routeKey(r)] ?? (r.method === 'HEAD' ? ROUTE_FUZZERS[`GET ${r.url}`] : undefined);

  it('has a request generator for every route the app registers', () => {
    expect(t.routes.filter((r) => !generatorFor(r)).map(routeKey)).toEqual([]);
  });

  // The time limit only matters when a property fails and fast-check shrinks the counterexample.
  it('answers every generated request with a 2xx only when valid, else a catalogued 4xx problem, never a 5xx', { timeout: 180_000 }, async () => {
    const started = performance.now();
    const failures: string[] = [];
    for (const route of t.routes) {
      const gen = generatorFor(route)!(world);
      const arb = route.method === 'HEAD' ? gen.map((c) => ({ ...c, method: 'HEAD' })) : gen;
      const withHeaders = fc.tuple(arb, noiseHeaders).map(([c, noise]) => ({ ...c, headers: { ...noise, ...c.headers } }));
      await fuzz(routeKey(route), withHeaders, route.method === 'HEAD' ? HEAD_RUNS : (RUNS[routeKey(route)] ?? DEFAULT_RUNS), failures);
    }
    await fuzz('no route', unroutedRequest, DEFAULT_RUNS, failures);
    // Keys that must not authenticate, on every scoped route.
    const scoped = t.routes.filter((r) => r.scope !== undefined);
    await fuzz(
      'bad keys',
      fc.tuple(fc.constantFrom(...scoped), badAuthorization(world), fc.constantFrom(...world.ownJobIds)).map(([r, headers, id]): FuzzCase => ({
        method: r.method,
        url: r.url.replace(':id', id).replace(':index', '0').replace(':name', 'mlp'),
        headers,
        expect: 'reject',
        as: 'none',
        label: 'bad key',
      })),
      DEFAULT_RUNS * 2,
      failures,
    );
    const seconds = (performance.now() - started) / 1000;
    const total = [...answered.values()].reduce((a, b) => a + b, 0);
    console.log(
      `fuzz: ${total} requests over ${t.routes.length} routes in ${seconds.toFixed(1)} s (${[...answered]
        .sort()
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')})`,
    );
    expect(failures.join('\n\n')).toBe('');
  });

  it('still serves a valid job afterwards, and left the other tenant byte-identical', async () => {
    const res = await t.server.inject({ method: 'POST', url: '/v1/jobs', payload: { model: 'mlp', inputs: [mlpInput(1, 9)] }, headers: t.auth(world.fuzzKey) });
    expect(res.statusCode).toBe(202);
    expect(await otherTenantRows()).toBe(snapshotBefore);
  });
});
