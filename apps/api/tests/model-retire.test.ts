import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, demoModelBytes, mlpInput, type TestApp } from './helpers.ts';

// Retiring model versions through the API, with no worker: submits naming a
// retired version are refused, the name alone moves to the newest version
// left, a routed version is refused unless rerouted, and the artifact stays
// while a job of the version is unfinished. apps/worker/tests/model-retire.test.ts
// runs the queued jobs of a retired version on a real worker.

let t: TestApp;
let modelsKey: string;
beforeAll(async () => {
  t = await buildTestApp();
  // mlp v1, v2, v3 share one artifact (same bytes); solo is the same bytes under another name, so a key of its own.
  for (let i = 0; i < 3; i++) expect((await t.registerModel('mlp')).statusCode).toBe(201);
  expect((await t.registerModel('solo', await demoModelBytes('mlp'))).statusCode).toBe(201);
  modelsKey = await t.newKey({ scopes: ['jobs:read', 'models:write'] });
});
afterAll(() => t.close());

const retire = (ref: string, { reroute, key = modelsKey, requestId = 'req-retire' }: { reroute?: boolean; key?: string; requestId?: string } = {}) =>
  t.server.inject({
    method: 'DELETE',
    url: `/v1/models/${ref}${reroute === undefined ? '' : `?reroute=${reroute}`}`,
    headers: { ...t.auth(key), 'x-request-id': requestId },
  });
const submit = (model: string) =>
  t.server.inject({ method: 'POST', url: '/v1/jobs', payload: { model, inputs: [mlpInput(1, Math.random())] }, headers: t.auth(t.userKey) });
const get = (url: string) => t.server.inject({ method: 'GET', url, headers: t.auth(t.userKey) });
const versionOf = async (id: string) => (await get(`/v1/jobs/${id}`)).json().modelVersion;
const artifactOf = async (name: string, version: number) =>
  (
    await t.ctx.pool.query<{ key: string; deleted: Date | null }>(
      'SELECT artifact_key AS key, artifact_deleted_at AS deleted FROM models WHERE name = $1 AND version = $2',
      [name, version],
    )
  ).rows[0]!;
const retiredAudit = async () =>
  (await t.server.inject({ method: 'GET', url: '/v1/audit?limit=500', headers: t.auth() }))
    .json()
    .items.filter((e: { action: string }) => e.action === 'model:retired')
    .map((e: { resource: string; details: Record<string, unknown> }) => ({ resource: e.resource, details: e.details }));

describe('retiring a model version', () => {
  const queued: string[] = [];

  it('answers 404 for an unknown model or version, 400 for a malformed reference and 403 without models:write', async () => {
    expect((await retire('nope')).json().code).toBe('MODEL_NOT_FOUND');
    const unknown = await retire('mlp:42');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe('MODEL_NOT_FOUND');
    for (const ref of ['MLP', 'mlp:0', 'mlp:1:2']) expect((await retire(ref)).statusCode, ref).toBe(400);
    expect((await retire('mlp:1', { reroute: 'maybe' as unknown as boolean })).statusCode).toBe(400);
    const forbidden = await retire('mlp:3', { key: t.userKey });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json().code).toBe('FORBIDDEN');
    expect((await get('/v1/models/mlp:3')).json().retiredAt).toBeUndefined();
  });

  it('refuses new jobs for a retired version, keeps its row and its queued jobs, and sends the name alone to the newest version left', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await submit('mlp:3');
      expect(res.statusCode).toBe(202);
      queued.push(res.json().id);
    }
    const res = await retire('mlp:3');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ name: 'mlp', versions: [{ version: 3, retiredAt: expect.any(String), unfinishedJobs: 2 }], routing: [] });
    const { retiredAt } = res.json().versions[0];

    const refused = await submit('mlp:3');
    expect(refused.statusCode).toBe(410);
    expect(refused.json()).toMatchObject({ code: 'MODEL_VERSION_RETIRED', status: 410 });
    const unversioned = await submit('mlp');
    expect(unversioned.statusCode).toBe(202);
    expect(await versionOf(unversioned.json().id)).toBe(2);
    const v2 = await t.server.inject({
      method: 'POST',
      url: '/v2/models/mlp/versions/3/infer',
      payload: { inputs: [{ name: 'features', datatype: 'FP32', shape: [1, 64], data: mlpInput().data }] },
      headers: t.auth(t.userKey),
    });
    expect(v2.statusCode).toBe(410);
    expect(v2.json().code).toBe('MODEL_VERSION_RETIRED');
    const embeddings = await t.server.inject({ method: 'POST', url: '/v1/embeddings', payload: { model: 'mlp:3', input: 'hi' }, headers: t.auth(t.userKey) });
    expect(embeddings.statusCode).toBe(410);
    expect((await get('/v2/models/mlp')).json().versions).toEqual(['2', '1']);

    // The views: the row stays with retiredAt, the name alone shows the newest version left.
    expect((await get('/v1/models/mlp:3')).json()).toMatchObject({ version: 3, retiredAt });
    expect((await get('/v1/models/mlp')).json()).toMatchObject({ version: 2 });
    expect((await get('/v1/models/mlp')).json().retiredAt).toBeUndefined();
    expect((await get('/v1/models')).json().items.find((m: { name: string }) => m.name === 'mlp').version).toBe(2);
    const versions = (await get('/v1/models/mlp/versions')).json().items.map((m: { version: number; retiredAt?: string }) => [m.version, m.retiredAt ?? null]);
    expect(versions).toEqual([
      [3, retiredAt],
      [2, null],
      [1, null],
    ]);
    // Its queued jobs stay queued for a worker, and still name their version.
    for (const id of queued) expect((await get(`/v1/jobs/${id}`)).json()).toMatchObject({ status: 'queued', modelVersion: 3 });

    // Idempotent: the same retirement again, nothing new audited.
    const again = await retire('mlp:3', { requestId: 'req-again' });
    expect(again.statusCode).toBe(200);
    expect(again.json().versions).toEqual([{ version: 3, retiredAt, unfinishedJobs: 2 }]);
    expect(await retiredAudit()).toEqual([{ resource: 'models/mlp:3', details: { requestId: 'req-retire', versions: [3], reroute: false } }]);
  });

  it('refuses a retry of a job on a retired version: a retry is a new job', async () => {
    const id = queued.shift()!;
    expect((await t.server.inject({ method: 'POST', url: `/v1/jobs/${id}/cancel`, headers: t.auth(t.userKey) })).statusCode).toBe(200);
    const retry = await t.server.inject({ method: 'POST', url: `/v1/jobs/${id}/retry`, headers: t.auth(t.userKey) });
    expect(retry.statusCode).toBe(410);
    expect(retry.json().code).toBe('MODEL_VERSION_RETIRED');
  });

  it('keeps the artifact while a job of the version is unfinished or its grace runs, then sweeps it; a key another version shares stays', async () => {
    const job = await submit('solo');
    expect(job.statusCode).toBe(202);
    const whole = await retire('solo', { requestId: 'req-solo' });
    expect(whole.statusCode).toBe(200);
    expect(whole.json().versions).toEqual([{ version: 1, retiredAt: expect.any(String), unfinishedJobs: 1 }]);
    // Every version retired: the name alone is refused too, and the model still shows, retired.
    const refused = await submit('solo');
    expect(refused.statusCode).toBe(410);
    expect(refused.json().detail).toMatch(/every version of model "solo" is retired/);
    expect((await get('/v1/models/solo')).json().retiredAt).toEqual(expect.any(String));

    const solo = await artifactOf('solo', 1);
    expect(await t.retirement.sweepRetiredArtifacts(0)).toEqual([]);
    expect(await t.ctx.storage.headObject(solo.key)).toBeDefined();
    expect((await t.server.inject({ method: 'POST', url: `/v1/jobs/${job.json().id}/cancel`, headers: t.auth(t.userKey) })).statusCode).toBe(200);
    // No job left, but retired under a minute ago: the grace keeps it.
    expect(await t.retirement.sweepRetiredArtifacts(60_000)).toEqual([]);
    expect(await t.ctx.storage.headObject(solo.key)).toBeDefined();
    expect(await t.retirement.sweepRetiredArtifacts(0)).toEqual([{ name: 'solo', version: 1 }]);
    expect(await t.ctx.storage.headObject(solo.key)).toBeUndefined();
    expect((await artifactOf('solo', 1)).deleted).toBeInstanceOf(Date);
    // The old job still shows its version.
    expect((await get(`/v1/jobs/${job.json().id}`)).json()).toMatchObject({ model: 'solo', modelVersion: 1, status: 'canceled' });

    // mlp:3's last queued job ends: its row is swept, but v1 and v2 still run on the same object.
    expect((await t.server.inject({ method: 'POST', url: `/v1/jobs/${queued.shift()}/cancel`, headers: t.auth(t.userKey) })).statusCode).toBe(200);
    expect(await t.retirement.sweepRetiredArtifacts(0)).toEqual([{ name: 'mlp', version: 3 }]);
    const mlp3 = await artifactOf('mlp', 3);
    expect(mlp3.deleted).toBeInstanceOf(Date);
    expect(mlp3.key).toBe((await artifactOf('mlp', 1)).key);
    expect(await t.ctx.storage.headObject(mlp3.key)).toBeDefined();
    expect(await t.retirement.sweepRetiredArtifacts(0)).toEqual([]);
  });

  it('refuses a version the routing table sends traffic to, naming the table, and takes it out with reroute=true', async () => {
    const put = await t.server.inject({
      method: 'PUT',
      url: '/v1/models/mlp/routing',
      payload: {
        versions: [
          { version: 1, weight: 80 },
          { version: 2, weight: 20 },
        ],
      },
      headers: t.auth(modelsKey),
    });
    expect(put.statusCode, put.body).toBe(200);
    const refused = await retire('mlp:1');
    expect(refused.statusCode).toBe(409);
    expect(refused.json().code).toBe('MODEL_VERSION_ROUTED');
    expect(refused.json().detail).toContain('version 1 (weight 80 of 100)');
    expect((await retire('mlp:1', { reroute: false })).statusCode).toBe(409);
    expect((await get('/v1/models/mlp:1')).json().retiredAt).toBeUndefined();

    const rerouted = await retire('mlp:1', { reroute: true, requestId: 'req-reroute' });
    expect(rerouted.statusCode, rerouted.body).toBe(200);
    expect(rerouted.json()).toMatchObject({ versions: [{ version: 1, unfinishedJobs: 0 }], routing: [{ version: 2, weight: 20 }] });
    expect((await get('/v1/models/mlp/routing')).json().versions).toEqual([{ version: 2, weight: 20 }]);
    for (let i = 0; i < 10; i++) {
      const res = await submit('mlp');
      expect(res.statusCode).toBe(202);
      expect(await versionOf(res.json().id)).toBe(2);
    }
    // A routing table may not name a retired version.
    const putRetired = await t.server.inject({
      method: 'PUT',
      url: '/v1/models/mlp/routing',
      payload: { versions: [{ version: 1, weight: 1 }] },
      headers: t.auth(modelsKey),
    });
    expect(putRetired.statusCode).toBe(410);
    expect(putRetired.json().errors).toEqual([{ pointer: '/body/versions/0/version', code: 'MODEL_VERSION_RETIRED', detail: 'retired' }]);

    // The last version, rerouted: the table goes, and the name alone is refused.
    const last = await retire('mlp', { reroute: true, requestId: 'req-last' });
    expect(last.statusCode).toBe(200);
    expect(last.json().versions.map((v: { version: number }) => v.version)).toEqual([3, 2, 1]);
    expect(last.json().routing).toEqual([]);
    expect((await get('/v1/models/mlp/routing')).json().versions).toEqual([]);
    expect((await submit('mlp')).json().code).toBe('MODEL_VERSION_RETIRED');

    expect(await retiredAudit()).toEqual([
      {
        resource: 'models/mlp',
        details: { requestId: 'req-last', versions: [2], reroute: true, routing: [], previous: [{ version: 2, weight: 20 }] },
      },
      {
        resource: 'models/mlp:1',
        details: {
          requestId: 'req-reroute',
          versions: [1],
          reroute: true,
          routing: [{ version: 2, weight: 20 }],
          previous: [
            { version: 1, weight: 80 },
            { version: 2, weight: 20 },
          ],
        },
      },
      { resource: 'models/solo', details: { requestId: 'req-solo', versions: [1], reroute: false } },
      { resource: 'models/mlp:3', details: { requestId: 'req-retire', versions: [3], reroute: false } },
    ]);
  });
});
