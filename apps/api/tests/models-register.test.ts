import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, demoModelBytes, multipartBody, type TestApp } from './helpers.ts';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

describe('model registry', () => {
  it('registers an ONNX upload with its signature, sha256 and batching settings, and stores the artifact', async () => {
    const bytes = await demoModelBytes('transformer');
    const res = await t.registerModel('transformer', bytes, { maxBatchSize: '8', maxBatchDelayMs: '3' });
    expect(res.statusCode).toBe(201);
    const model = res.json();
    expect(model).toMatchObject({ name: 'transformer', version: 1, sizeBytes: bytes.byteLength, batching: { maxBatchSize: 8, maxBatchDelayMs: 3 } });
    expect(model.signature.batchable).toBe(true);
    expect(model.signature.inputs.map((i: { name: string; datatype: string }) => `${i.name}:${i.datatype}`).sort()).toEqual([
      'attention_mask:INT64',
      'input_ids:INT64',
    ]);
    expect(model.sha256).toMatch(/^[0-9a-f]{64}$/);
    const stored = await t.ctx.pool.query('SELECT artifact_key FROM models WHERE name = $1', ['transformer']);
    expect((await t.ctx.storage.headObject(stored.rows[0].artifact_key))?.sizeBytes).toBe(bytes.byteLength);
  });

  it('creates a new version when a name is uploaded again, and lists the latest', async () => {
    const again = await t.registerModel('transformer');
    expect(again.json().version).toBe(2);
    const list = await t.server.inject({ method: 'GET', url: '/v1/models', headers: t.auth() });
    expect(list.json().items.map((m: { name: string; version: number }) => `${m.name}:${m.version}`)).toEqual(['transformer:2']);
    const one = await t.server.inject({ method: 'GET', url: '/v1/models/transformer', headers: t.auth() });
    expect(one.json().version).toBe(2);
    const older = await t.server.inject({ method: 'GET', url: '/v1/models/transformer:1', headers: t.auth() });
    expect(older.json().version).toBe(1);
    const unknownVersion = await t.server.inject({ method: 'GET', url: '/v1/models/transformer:9', headers: t.auth() });
    expect(unknownVersion.json().code).toBe('MODEL_NOT_FOUND');
    const none = await t.server.inject({ method: 'GET', url: '/v1/models/absent', headers: t.auth() });
    expect(none.json().code).toBe('MODEL_NOT_FOUND');
  });

  it('refuses files that are not ONNX models and bad fields, with 4xx codes', async () => {
    const garbage = await t.registerModel('junk', Buffer.from('this is not a model'));
    expect(garbage.statusCode).toBe(422);
    expect(garbage.json().code).toBe('MODEL_INVALID');
    const badName = await t.registerModel('Bad Name!', await demoModelBytes('mlp'));
    expect(badName.statusCode).toBe(400);
    expect(badName.json().code).toBe('VALIDATION_FAILED');
    const noFile = multipartBody({ name: 'x' });
    const missing = await t.server.inject({ method: 'POST', url: '/v1/models', payload: noFile.payload, headers: { ...noFile.headers, ...t.auth() } });
    expect(missing.statusCode).toBe(400);
    const json = await t.server.inject({ method: 'POST', url: '/v1/models', payload: { name: 'x' }, headers: t.auth() });
    expect(json.statusCode).toBe(415);
    const user = await t.server.inject({ method: 'POST', url: '/v1/models', payload: noFile.payload, headers: { ...noFile.headers, ...t.auth(t.userKey) } });
    expect(user.statusCode).toBe(403);
  });

  it('serves the OpenAPI document with every route', async () => {
    const res = await t.server.inject({ method: 'GET', url: '/docs/json' });
    expect(res.statusCode).toBe(200);
    const paths = Object.keys(res.json().paths);
    for (const p of ['/v1/jobs', '/v1/jobs/{id}', '/v1/jobs/{id}/cancel', '/v1/models', '/v1/models/{name}', '/v1/keys']) expect(paths).toContain(p);
  });
});
