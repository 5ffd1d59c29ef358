import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, mlpRows, startStack, waitFor, type Stack } from '@inferq/test-utils';

// Polls through the job view cache (job-view-cache.ts), in the API as it runs
// (JOB_VIEW_CACHE_MS at its default): repeated polls of a queued job read
// Postgres twice, a job's end shows as soon as the queue reports it, a
// finished job is kept and a delete through this process shows at once, and
// one key never sees another's job through what another caller left behind.

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ logLevel: 'warn' });
  await stack.registerModel('mlp');
});
afterAll(() => stack?.close());

const body = { model: 'mlp', inputs: [{ name: 'features', datatype: 'FP32', shape: [1, 64], data: Array.from(mlpRows(1, 3)) }] };
const get = (id: string, key = ADMIN_KEY) => fetch(`${stack.baseUrl}/v1/jobs/${id}`, { headers: { authorization: `Bearer ${key}` } });
/** inferq_job_views_total by source, as /metrics says now. */
async function views(): Promise<{ memory: number; postgres: number }> {
  const text = await (await fetch(`${stack.baseUrl}/metrics`)).text();
  const count = (source: string) => Number(new RegExp(`^inferq_job_views_total\\{source="${source}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return { memory: count('memory'), postgres: count('postgres') };
}

describe('polls', () => {
  let id: string;

  it('of a queued job read Postgres for the first two, then answer from memory while nothing happens to it', async () => {
    const submitted = await stack.request('POST', '/v1/jobs', body);
    expect(submitted.status).toBe(202);
    id = submitted.json.id;
    const before = await views();
    for (let i = 0; i < 20; i++) expect((await (await get(id)).json()).status).toBe('queued');
    const after = await views();
    expect(after.postgres - before.postgres).toBe(2);
    expect(after.memory - before.memory).toBe(18);
  });

  it("see the job's end as the queue reports it, not a cache's time later", async () => {
    await stack.startWorker();
    // Polled faster than JOB_VIEW_CACHE_MS: only the queue's events can bring the end in time.
    await waitFor(async () => (await (await get(id)).json()).status === 'succeeded', { timeoutMs: 30_000, intervalMs: 20, what: 'the job to succeed' });
    const before = await views();
    for (let i = 0; i < 10; i++) expect((await (await get(id)).json()).outputs).toHaveLength(1);
    expect((await views()).postgres - before.postgres).toBeLessThanOrEqual(1);
  });

  it("never show a job to a key that does not own it, whoever's poll left it in memory", async () => {
    const other = await stack.request('POST', '/v1/keys', { name: 'other' });
    expect(other.status).toBe(201);
    const res = await get(id, other.json.secret);
    expect(res.status).toBe(404);
    expect((await res.json()).code).toBe('JOB_NOT_FOUND');
  });

  it('of a job deleted through this process answer 410 at once', async () => {
    expect((await get(id)).status).toBe(200);
    const deleted = await fetch(`${stack.baseUrl}/v1/jobs/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(deleted.status).toBe(200);
    const res = await get(id);
    expect(res.status).toBe(410);
    expect((await res.json()).code).toBe('JOB_PURGED');
  });
});
