import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGraphBuilder, ElemType } from '@inferq/onnx-model';
import { buildTestApp, demoModelBytes, type TestApp } from './helpers.ts';

let t: TestApp;
let mlp: Buffer;
beforeAll(async () => {
  t = await buildTestApp();
  mlp = await demoModelBytes('mlp');
});
afterAll(() => t.close());

/** Identity over a fixed [1, 4] input: no dynamic leading dim, so not batchable. */
function fixedBatchModel(): Uint8Array {
  const g = createGraphBuilder({ graphName: 'fixed', seed: 1 });
  g.addNode('Identity', ['x'], {}, 'y');
  return g.encodeModel({ inputs: [{ name: 'x', elemType: ElemType.FLOAT, dims: [1, 4] }], outputs: [{ name: 'y', elemType: ElemType.FLOAT, dims: [1, 4] }] });
}

const getModel = async (ref: string) => (await t.server.inject({ method: 'GET', url: `/v1/models/${ref}`, headers: t.auth(t.userKey) })).json();

describe('adaptive batching settings', () => {
  it('registers models as fixed with no target unless the upload asks for auto', async () => {
    const res = await t.registerModel('plain', mlp, { maxBatchSize: '8' });
    expect(res.statusCode).toBe(201);
    expect(res.json().batching).toEqual({ maxBatchSize: 8, maxBatchDelayMs: 5, mode: 'fixed', latencyTargetMs: null });
    const explicit = await t.registerModel('plain', mlp, { batching: 'fixed' });
    expect(explicit.json().batching).toMatchObject({ mode: 'fixed', latencyTargetMs: null });
  });

  it('stores auto with the given target, or 100 ms when none is given, with the size and delay as upper bounds', async () => {
    const targeted = await t.registerModel('auto-50', mlp, { batching: 'auto', latencyTargetMs: '50', maxBatchSize: '64', maxBatchDelayMs: '20' });
    expect(targeted.statusCode).toBe(201);
    expect(targeted.json().batching).toEqual({ maxBatchSize: 64, maxBatchDelayMs: 20, mode: 'auto', latencyTargetMs: 50 });
    const defaulted = await t.registerModel('auto-default', mlp, { batching: 'auto' });
    expect(defaulted.json().batching).toEqual({ maxBatchSize: 32, maxBatchDelayMs: 5, mode: 'auto', latencyTargetMs: 100 });
    const row = await t.ctx.pool.query('SELECT batching_mode, latency_target_ms FROM models WHERE name = $1', ['auto-50']);
    expect(row.rows).toEqual([{ batching_mode: 'auto', latency_target_ms: 50 }]);
  });

  it('refuses a target without batching=auto, and modes and targets out of range, with VALIDATION_FAILED', async () => {
    for (const fields of [{ latencyTargetMs: '50' }, { batching: 'fixed', latencyTargetMs: '50' }] as Array<Record<string, string>>) {
      const res = await t.registerModel('refused', mlp, fields);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ pointer: '/body/latencyTargetMs' }] });
    }
    const outOfRange: Array<Record<string, string>> = [
      { batching: 'adaptive' },
      { batching: 'auto', latencyTargetMs: '0' },
      { batching: 'auto', latencyTargetMs: '600001' },
      { batching: 'auto', latencyTargetMs: '1.5' },
    ];
    for (const fields of outOfRange) {
      const res = await t.registerModel('refused', mlp, fields);
      expect(res.statusCode, JSON.stringify(fields)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_FAILED');
    }
    expect(await getModel('refused')).toMatchObject({ code: 'MODEL_NOT_FOUND' });
  });

  it('registers a model that is not batchable as fixed, whatever the upload asks', async () => {
    const res = await t.registerModel('single', fixedBatchModel(), { batching: 'auto', latencyTargetMs: '50', maxBatchSize: '16' });
    expect(res.statusCode).toBe(201);
    expect(res.json().signature.batchable).toBe(false);
    expect(res.json().batching).toEqual({ maxBatchSize: 1, maxBatchDelayMs: 5, mode: 'fixed', latencyTargetMs: null });
  });

  it('shows the mode and target in every model view', async () => {
    const expected = { mode: 'auto', latencyTargetMs: 50 };
    const list = (await t.server.inject({ method: 'GET', url: '/v1/models', headers: t.auth(t.userKey) })).json();
    expect(list.items.find((m: { name: string }) => m.name === 'auto-50').batching).toMatchObject(expected);
    expect((await getModel('auto-50')).batching).toMatchObject(expected);
    expect((await getModel('auto-50:1')).batching).toMatchObject(expected);
    const versions = (await t.server.inject({ method: 'GET', url: '/v1/models/plain/versions', headers: t.auth(t.userKey) })).json();
    expect(versions.items.map((m: { batching: { mode: string } }) => m.batching.mode)).toEqual(['fixed', 'fixed']);
  });
});
