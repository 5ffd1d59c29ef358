import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mlpRows, startStack, waitFor, type Stack } from '@inferq/test-utils';

// Batch provenance and device-time accounting with a real worker: jobs of two
// tenants with different row counts share batches; each batch's device time is
// split over its jobs by rows, and /v1/usage sums it per key and per model.

let stack: Stack;
const keys: Record<'a' | 'b', { id: string; secret: string }> = {} as never;
beforeAll(async () => {
  stack = await startStack();
  // A long delay so the jobs submitted together fill one batch.
  await stack.registerModel('mlp', { maxBatchSize: '16', maxBatchDelayMs: '300' });
  await stack.registerModel('mlp-cached', { responseCache: 'true' }, 'mlp');
  for (const name of ['a', 'b'] as const) {
    const res = await stack.request('POST', '/v1/keys', { name: `tenant-${name}`, scopes: ['jobs:read', 'jobs:write'] });
    keys[name] = { id: res.json.id, secret: res.json.secret };
  }
  await stack.startWorker();
});
afterAll(() => stack?.close());

const auth = (secret: string) => ({ authorization: `Bearer ${secret}` });
const mlpInput = (rows: number, seed: number) => ({
  name: 'features',
  datatype: 'FP32',
  shape: [rows, 64],
  data: Buffer.from(mlpRows(rows, seed).buffer).toString('base64'),
});

async function submit(secret: string, model: string, rows: number, seed: number): Promise<string> {
  const res = await stack.request('POST', '/v1/jobs', { model, inputs: [mlpInput(rows, seed)] }, auth(secret));
  expect(res.status).toBe(202);
  return res.json.id;
}
const finished = (id: string, secret: string) =>
  waitFor(
    async () => {
      const job = (await stack.request('GET', `/v1/jobs/${id}`, undefined, auth(secret))).json;
      return job.status === 'succeeded' ? job : undefined;
    },
    { timeoutMs: 20_000, what: `job ${id} to succeed` },
  );

describe('batch provenance and device-time accounting', () => {
  let jobs: Array<{ id: string; tenant: 'a' | 'b'; rows: number }> = [];

  it('records where each job ran and splits its batch device time by rows', async () => {
    const plan = [
      { tenant: 'a', rows: 1 },
      { tenant: 'a', rows: 3 },
      { tenant: 'b', rows: 2 },
      { tenant: 'b', rows: 2 },
    ] as const;
    jobs = await Promise.all(plan.map(async (p, i) => ({ ...p, id: await submit(keys[p.tenant].secret, 'mlp', p.rows, i) })));
    const done = await Promise.all(jobs.map((j) => finished(j.id, keys[j.tenant].secret)));
    const model = (await stack.request('GET', '/v1/models/mlp')).json;
    for (const [i, job] of done.entries()) {
      expect(job).toMatchObject({
        items: jobs[i]!.rows,
        device: 'cpu',
        provider: 'cpu',
        modelSha256: model.sha256,
        workerId: expect.any(String),
        batchId: expect.any(String),
      });
      expect(job.deviceMs).toBeGreaterThan(0);
    }
    expect(new Set(done.map((j) => j.batchId)).size, 'the four jobs shared one batch').toBe(1);

    const batch = await stack.request('GET', `/v1/inference-batches/${done[0].batchId}`);
    expect(batch.status).toBe(200);
    expect(batch.json).toMatchObject({ model: 'mlp', modelVersion: 1, modelSha256: model.sha256, device: 'cpu', provider: 'cpu', size: 4, items: 8 });
    const shares = batch.json.jobs as Array<{ id: string; items: number; deviceMs: number; ownerKeyId: string }>;
    expect(shares).toHaveLength(4);
    // Shares add up to the batch's device time and follow the rows: 1/8, 3/8, 2/8, 2/8.
    expect(shares.reduce((s, j) => s + j.deviceMs, 0)).toBeCloseTo(batch.json.inferMs, 9);
    for (const j of shares) expect(j.deviceMs).toBeCloseTo((batch.json.inferMs * j.items) / 8, 9);
    const shareList = shares.map((j) => `${j.items}:${j.deviceMs.toFixed(3)}`).join(', ');
    console.log(`batch of 4 jobs / 8 rows: ${batch.json.inferMs.toFixed(3)} ms on ${batch.json.provider}; shares ${shareList}`);

    // Admins only.
    expect((await stack.request('GET', `/v1/inference-batches/${done[0].batchId}`, undefined, auth(keys.a.secret))).status).toBe(403);
    expect((await stack.request('GET', '/v1/inference-batches/0190a1b2-9d8e-7f6a-8b5c-4d3e2f1a0b9c')).status).toBe(404);
  });

  it('sums device time per key and per model, each tenant seeing only its own', async () => {
    // A cache hit runs nothing and costs nothing.
    const source = await submit(keys.a.secret, 'mlp-cached', 1, 99);
    await finished(source, keys.a.secret);
    const hit = await submit(keys.a.secret, 'mlp-cached', 1, 99);
    expect((await stack.request('GET', `/v1/jobs/${hit}`, undefined, auth(keys.a.secret))).json).toMatchObject({ cacheHit: true, deviceMs: null });

    const { rows } = await stack.ctx.pool.query<{ owner: string; model: string; n: number; items: number; ms: number }>(
      'SELECT owner_key_id AS owner, model_name AS model, count(*)::int AS n, sum(items)::int AS items, ' +
        'sum(device_ms) AS ms FROM jobs WHERE device_ms IS NOT NULL GROUP BY 1, 2',
    );
    const sum = (pick: (r: (typeof rows)[number]) => boolean) =>
      rows.filter(pick).reduce((t, r) => ({ jobs: t.jobs + r.n, items: t.items + r.items, deviceMs: t.deviceMs + r.ms }), { jobs: 0, items: 0, deviceMs: 0 });

    const byKey = (await stack.request('GET', '/v1/usage?groupBy=key')).json;
    expect(byKey.groupBy).toBe('key');
    for (const name of ['a', 'b'] as const) {
      const row = byKey.items.find((i: { keyId: string }) => i.keyId === keys[name].id);
      const want = sum((r) => r.owner === keys[name].id);
      expect(row).toMatchObject({ keyName: `tenant-${name}`, jobs: want.jobs, items: want.items });
      expect(row.deviceMs).toBeCloseTo(want.deviceMs, 6);
    }
    expect(byKey.total.jobs).toBe(sum(() => true).jobs);
    expect(byKey.items.find((i: { keyId: string }) => i.keyId === keys.a.id).jobs).toBe(3); // two mlp jobs and the cache's source, not the hit

    const byModel = (await stack.request('GET', '/v1/usage?groupBy=model')).json;
    expect(byModel.items.map((i: { model: string; modelVersion: number; items: number }) => [i.model, i.modelVersion, i.items]).sort()).toEqual([
      ['mlp', 1, 8],
      ['mlp-cached', 1, 1],
    ]);

    const own = (await stack.request('GET', '/v1/usage', undefined, auth(keys.b.secret))).json;
    expect(own.items.map((i: { keyId: string }) => i.keyId)).toEqual([keys.b.id]);

    const past = (await stack.request('GET', '/v1/usage?from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z')).json;
    expect(past).toMatchObject({ items: [], total: { jobs: 0, items: 0, deviceMs: 0 } });
    expect((await stack.request('GET', '/v1/usage?from=2030-01-02T00:00:00Z&to=2030-01-01T00:00:00Z')).status).toBe(400);
  });
});
