import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestContext, type TestContext } from '@inferq/test-utils';
import { createApiKeysService } from '../src/services/keys/api-keys-service.ts';
import { createModelsService, type ModelsService } from '../src/services/models/models-service.ts';
import { demoModelBytes } from './helpers.ts';

// The submit path's model lookups: a batch submits hundreds of lines at once,
// and they share one lookup rather than each querying on a cache miss.

let ctx: TestContext;
let models: ModelsService;
let queries: ReturnType<typeof vi.spyOn>;
beforeAll(async () => {
  ctx = await createTestContext();
  models = createModelsService({ pool: ctx.pool, storage: ctx.storage, cacheTtlMs: 5_000 });
  const { record: key } = await createApiKeysService(ctx.pool, { cacheTtlMs: 0 }).createKey('admin', ['admin']);
  await models.registerModel({
    name: 'mlp',
    bytes: await demoModelBytes('mlp'),
    batching: {},
    responseCache: false,
    actor: { keyId: key.id, requestId: 'test' },
  });
  queries = vi.spyOn(ctx.pool, 'query');
});
afterAll(() => ctx?.close());

describe('model lookups on the submit path', () => {
  it('makes one lookup of a model and one of its routing table for 500 submits at once', async () => {
    models.forget('mlp');
    queries.mockClear();
    const routed = await Promise.all(Array.from({ length: 500 }, () => models.routeModel('mlp')));
    expect(new Set(routed.map((m) => `${m.name}:${m.version}`))).toEqual(new Set(['mlp:1']));
    expect(queries).toHaveBeenCalledTimes(2);
  });

  it('keeps no failed lookup: an unknown model is looked up again, and shares the one in flight', async () => {
    queries.mockClear();
    const tries = await Promise.allSettled(Array.from({ length: 50 }, () => models.lookupModel('nope')));
    expect(tries.every((t) => t.status === 'rejected' && (t.reason as { code: string }).code === 'MODEL_NOT_FOUND')).toBe(true);
    await expect(models.lookupModel('nope')).rejects.toMatchObject({ code: 'MODEL_NOT_FOUND' });
    expect(queries).toHaveBeenCalledTimes(2);
  });

  it('looks again after forget (a retirement here)', async () => {
    await models.lookupModel('mlp');
    queries.mockClear();
    models.forget('mlp');
    await models.lookupModel('mlp');
    expect(queries).toHaveBeenCalledTimes(1);
  });
});
