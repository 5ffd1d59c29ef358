import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markJobsRunning, startJobs } from '@inferq/db';
import { testBatchRun } from '@inferq/test-utils';
import { buildTestApp, mlpInput, type TestApp } from './helpers.ts';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
  for (const name of ['mlp', 'transformer']) expect((await t.registerModel(name)).statusCode).toBe(201);
});
afterAll(() => t.close());

const TRANSFORMER_INPUTS = [
  { name: 'input_ids', datatype: 'INT64', shape: [1, 4], data: [2, 516, 209, 3] },
  { name: 'attention_mask', datatype: 'INT64', shape: [1, 4], data: [1, 1, 1, 1] },
];

/** A fresh key per test, so each test's jobs are its own. */
const tenant = async () => {
  const key = await t.newKey();
  const keyId: string = (await t.server.inject({ method: 'GET', url: '/v1/me', headers: t.auth(key) })).json().keyId;
  return { key, keyId };
};
const submit = async (key: string, model: 'mlp' | 'transformer' = 'mlp'): Promise<string> => {
  const inputs = model === 'mlp' ? [mlpInput(1, Math.random())] : TRANSFORMER_INPUTS;
  const res = await t.server.inject({ method: 'POST', url: '/v1/jobs', payload: { model, inputs }, headers: t.auth(key) });
  expect(res.statusCode, res.body).toBe(202);
  return res.json().id;
};
const submitMany = async (key: string, n: number): Promise<string[]> => {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push(await submit(key));
  return ids;
};
const bulk = (action: 'cancel' | 'retry', body: unknown, key = t.adminKey, requestId = randomUUID()) =>
  t.server.inject({ method: 'POST', url: `/v1/jobs/bulk-${action}`, payload: body as object, headers: { ...t.auth(key), 'x-request-id': requestId } });
const bulkOk = async (action: 'cancel' | 'retry', body: unknown, key?: string) => {
  const res = await bulk(action, body, key);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
const statusOf = async (id: string): Promise<string> => (await t.ctx.pool.query('SELECT status FROM jobs WHERE id = $1', [id])).rows[0].status;
const statuses = (ids: string[]) => Promise.all(ids.map(statusOf));
const inQueue = async (model: string, id: string): Promise<boolean> => (await t.producer.findQueuedIds(model, [id])).has(id);
const fail = (id: string, code: string, message = 'it broke') =>
  t.ctx.pool.query(`UPDATE jobs SET status = 'failed', error_code = $2, error_message = $3, finished_at = now() WHERE id = $1`, [id, code, message]);
const jobsOf = async (keyId: string) =>
  (await t.ctx.pool.query('SELECT id, status, model_name FROM jobs WHERE owner_key_id = $1 ORDER BY created_at', [keyId])).rows as Array<{
    id: string;
    status: string;
    model_name: string;
  }>;

describe('POST /v1/jobs/bulk-cancel and /bulk-retry: the request', () => {
  it('refuses an empty filter with JOB_FILTER_EMPTY, so nothing is ever canceled by accident', async () => {
    const { key } = await tenant();
    const id = await submit(key);
    for (const action of ['cancel', 'retry'] as const) {
      for (const body of [{ filter: {} }, { filter: {}, dryRun: true }, { filter: {}, limit: 10 }]) {
        const res = await bulk(action, body, key);
        expect(res.statusCode, `${action} ${JSON.stringify(body)}`).toBe(400);
        expect(res.json().code).toBe('JOB_FILTER_EMPTY');
      }
    }
    expect(await statusOf(id)).toBe('queued');
  });

  it('refuses a missing filter, a limit out of 1..10000, unknown fields and cursor or limit inside the filter', async () => {
    for (const body of [
      {},
      { filter: { model: 'mlp' }, limit: 0 },
      { filter: { model: 'mlp' }, limit: 10_001 },
      { filter: { model: 'mlp' }, limit: 1.5 },
      { filter: { model: 'mlp' }, force: true },
      { filter: { model: 'mlp', cursor: 'x' } },
      { filter: { model: 'mlp', limit: 5 } },
      { filter: { status: 'nope' } },
      // A dry run is never mistaken for a real one: only true or false, no coercion.
      { filter: { model: 'mlp' }, dryRun: null },
      { filter: { model: 'mlp' }, dryRun: 'false' },
      { filter: { model: 'mlp' }, dryRun: 0 },
    ]) {
      const res = await bulk('cancel', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_FAILED');
    }
  });

  it('needs jobs:write', async () => {
    const reader = await t.newKey({ scopes: ['jobs:read'] });
    for (const action of ['cancel', 'retry'] as const) expect((await bulk(action, { filter: { model: 'mlp' } }, reader)).json().code).toBe('FORBIDDEN');
  });
});

describe('POST /v1/jobs/bulk-cancel', () => {
  it("cancels a key's queued jobs of one model and removes them from the queue; other models and other keys' jobs stay", async () => {
    const a = await tenant();
    const b = await tenant();
    const aMlp = await submitMany(a.key, 3);
    const aTransformer = await submit(a.key, 'transformer');
    const bMlp = await submitMany(b.key, 2);
    expect(await bulkOk('cancel', { filter: { model: 'mlp' } }, a.key)).toEqual({ matched: 3, touched: 3, skipped: 0, truncated: false, dryRun: false });
    expect(await statuses(aMlp)).toEqual(['canceled', 'canceled', 'canceled']);
    for (const id of aMlp) expect(await inQueue('mlp', id)).toBe(false);
    expect(await statusOf(aTransformer)).toBe('queued');
    expect(await inQueue('transformer', aTransformer)).toBe(true);
    expect(await statuses(bMlp)).toEqual(['queued', 'queued']);
    for (const id of bMlp) expect(await inQueue('mlp', id)).toBe(true);
  });

  it("never reaches another key's jobs, even naming that key; an admin reaches them with keyId", async () => {
    const a = await tenant();
    const b = await tenant();
    const bJobs = await submitMany(b.key, 2);
    expect(await bulkOk('cancel', { filter: { keyId: b.keyId } }, a.key)).toMatchObject({ matched: 0, touched: 0 });
    expect(await statuses(bJobs)).toEqual(['queued', 'queued']);
    expect(await bulkOk('cancel', { filter: { keyId: b.keyId } })).toMatchObject({ matched: 2, touched: 2 });
    expect(await statuses(bJobs)).toEqual(['canceled', 'canceled']);
  });

  it('cancels only queued jobs: a running one finishes, finished ones are not matched', async () => {
    const a = await tenant();
    const [running, failed, queued] = await submitMany(a.key, 3);
    // Claimed by a batch that has run long enough to write its claim.
    const batchId = randomUUID();
    const claim = await startJobs(t.ctx.pool, { ids: [running!], workerId: 'w', batchId, batchSize: 1 });
    expect(await markJobsRunning(t.ctx.pool, testBatchRun(batchId, 'w'), [{ id: running!, attempt: claim.get(running!)!.attempt }])).toEqual(
      new Set([running]),
    );
    await fail(failed!, 'INFERENCE_FAILED');
    expect(await bulkOk('cancel', { filter: { keyId: a.keyId } })).toMatchObject({ matched: 1, touched: 1 });
    expect(await statuses([running!, failed!, queued!])).toEqual(['running', 'failed', 'canceled']);
    // A status the cancel does not apply to matches nothing.
    expect(await bulkOk('cancel', { filter: { keyId: a.keyId, status: 'running' } })).toMatchObject({ matched: 0, touched: 0 });
  });

  it('finishes the canceled jobs as a single cancel does, so their webhooks become due', async () => {
    const a = await tenant();
    const payload = { model: 'mlp', inputs: [mlpInput()], webhook: { url: 'http://127.0.0.1:9/hook' } };
    const res = await t.server.inject({ method: 'POST', url: '/v1/jobs', payload, headers: t.auth(a.key) });
    expect(res.statusCode, res.body).toBe(202);
    expect(await bulkOk('cancel', { filter: { keyId: a.keyId } }, a.key)).toMatchObject({ touched: 1 });
    const { rows } = await t.ctx.pool.query('SELECT status, finished_at, webhook_state FROM jobs WHERE id = $1', [res.json().id]);
    expect(rows[0]).toMatchObject({ status: 'canceled', webhook_state: null });
    expect(rows[0].finished_at).toBeInstanceOf(Date);
  });

  it('skips, without waiting, a job whose row a worker holds at that moment', async () => {
    const a = await tenant();
    const [held, free] = await submitMany(a.key, 2);
    const worker = await t.ctx.pool.connect();
    try {
      await worker.query('BEGIN');
      await worker.query('SELECT id FROM jobs WHERE id = $1 FOR UPDATE', [held]);
      expect(await bulkOk('cancel', { filter: { keyId: a.keyId } }, a.key)).toEqual({ matched: 2, touched: 1, skipped: 1, truncated: false, dryRun: false });
      await worker.query('ROLLBACK');
    } finally {
      worker.release();
    }
    expect(await statuses([held!, free!])).toEqual(['queued', 'canceled']);
    expect(await inQueue('mlp', held!)).toBe(true);
  });

  it('acts on at most `limit` jobs, oldest first, says truncated, and a dry run only counts', async () => {
    const a = await tenant();
    const ids = await submitMany(a.key, 5);
    const filter = { keyId: a.keyId, priority: 'normal' };
    expect(await bulkOk('cancel', { filter, limit: 2, dryRun: true }, a.key)).toEqual({ matched: 5, touched: 0, skipped: 0, truncated: true, dryRun: true });
    expect(await bulkOk('cancel', { filter, dryRun: true }, a.key)).toMatchObject({ matched: 5, truncated: false });
    expect(await statuses(ids)).toEqual(Array(5).fill('queued'));
    expect(await bulkOk('cancel', { filter, limit: 2 }, a.key)).toEqual({ matched: 5, touched: 2, skipped: 0, truncated: true, dryRun: false });
    expect(await statuses(ids)).toEqual(['canceled', 'canceled', 'queued', 'queued', 'queued']);
    expect(await bulkOk('cancel', { filter, limit: 2 }, a.key)).toMatchObject({ matched: 3, touched: 2, truncated: true });
    expect(await bulkOk('cancel', { filter, limit: 2 }, a.key)).toMatchObject({ matched: 1, touched: 1, truncated: false });
    expect(await statuses(ids)).toEqual(Array(5).fill('canceled'));
  });

  it('takes a time range: createdAfter inclusive, createdBefore exclusive', async () => {
    const a = await tenant();
    const [old, mid, recent] = await submitMany(a.key, 3);
    const at = (id: string, iso: string) => t.ctx.pool.query('UPDATE jobs SET created_at = $2 WHERE id = $1', [id, iso]);
    await at(old!, '2020-01-01T00:00:00Z');
    await at(mid!, '2020-01-02T00:00:00Z');
    const range = { keyId: a.keyId, createdAfter: '2020-01-02T00:00:00Z', createdBefore: '2020-01-03T00:00:00Z' };
    expect(await bulkOk('cancel', { filter: range })).toMatchObject({ matched: 1, touched: 1 });
    expect(await statuses([old!, mid!, recent!])).toEqual(['queued', 'canceled', 'queued']);
    expect(await bulkOk('cancel', { filter: { keyId: a.keyId, createdBefore: '2020-01-02T00:00:00Z' } })).toMatchObject({ matched: 1, touched: 1 });
    expect(await statuses([old!, mid!, recent!])).toEqual(['canceled', 'canceled', 'queued']);
  });
});

describe('POST /v1/jobs/bulk-retry', () => {
  it('retries the failed jobs with one error code as new queued jobs; others stay as they were', async () => {
    const a = await tenant();
    const [oom1, oom2, load, ok] = await submitMany(a.key, 4);
    await fail(oom1!, 'INFERENCE_FAILED', 'CUDA out of memory');
    await fail(oom2!, 'INFERENCE_FAILED', 'CUDA out of memory');
    await fail(load!, 'MODEL_LOAD_FAILED', 'no such object');
    expect(await bulkOk('retry', { filter: { errorCode: 'INFERENCE_FAILED' } }, a.key)).toEqual({
      matched: 2,
      touched: 2,
      skipped: 0,
      truncated: false,
      dryRun: false,
    });
    const after = await jobsOf(a.keyId);
    expect(after).toHaveLength(6);
    expect(after.slice(0, 4).map((j) => j.status)).toEqual(['failed', 'failed', 'failed', 'queued']);
    const retried = after.slice(4);
    expect(retried.map((j) => [j.status, j.model_name])).toEqual([
      ['queued', 'mlp'],
      ['queued', 'mlp'],
    ]);
    for (const j of retried) expect(await inQueue('mlp', j.id)).toBe(true);
    expect(after.map((j) => j.id)).toContain(ok);
  });

  it('retries canceled and expired jobs too, never queued, running or succeeded ones, and filters by error text', async () => {
    const a = await tenant();
    const [canceled, expired, queued] = await submitMany(a.key, 3);
    await bulkOk('cancel', { filter: { id: canceled! } }, a.key);
    await t.ctx.pool.query(
      `UPDATE jobs SET status = 'expired', error_code = 'DEADLINE_EXCEEDED', error_message = 'deadline passed', finished_at = now() WHERE id = $1`,
      [expired],
    );
    expect(await bulkOk('retry', { filter: { errorText: 'DEADLINE pass', keyId: a.keyId } }, a.key)).toMatchObject({ matched: 1, touched: 1 });
    expect(await bulkOk('retry', { filter: { status: 'queued', keyId: a.keyId } }, a.key)).toMatchObject({ matched: 0, touched: 0 });
    expect(await bulkOk('retry', { filter: { status: 'canceled', keyId: a.keyId } }, a.key)).toMatchObject({ matched: 1, touched: 1 });
    expect(await statusOf(queued!)).toBe('queued');
    expect(await jobsOf(a.keyId)).toHaveLength(5);
  });

  it('bounds retries by limit and counts without touching on a dry run', async () => {
    const a = await tenant();
    const ids = await submitMany(a.key, 3);
    for (const id of ids) await fail(id, 'WORKER_LOST');
    const filter = { errorCode: 'WORKER_LOST', keyId: a.keyId };
    expect(await bulkOk('retry', { filter, dryRun: true, limit: 1 }, a.key)).toEqual({ matched: 3, touched: 0, skipped: 0, truncated: true, dryRun: true });
    expect(await jobsOf(a.keyId)).toHaveLength(3);
    expect(await bulkOk('retry', { filter, limit: 2 }, a.key)).toEqual({ matched: 3, touched: 2, skipped: 0, truncated: true, dryRun: false });
    expect(await jobsOf(a.keyId)).toHaveLength(5);
  });

  it('retries each job once under one Idempotency-Key: the call sent again creates nothing', async () => {
    const a = await tenant();
    const ids = await submitMany(a.key, 3);
    for (const id of ids) await fail(id, 'WORKER_LOST');
    const body = { filter: { errorCode: 'WORKER_LOST', keyId: a.keyId } };
    const keyed = (key: string) =>
      t.server.inject({ method: 'POST', url: '/v1/jobs/bulk-retry', payload: body, headers: { ...t.auth(a.key), 'idempotency-key': key } });
    const first = await keyed('bulk-1');
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ matched: 3, touched: 3 });
    const again = await keyed('bulk-1');
    expect(again.json()).toEqual(first.json());
    expect(await jobsOf(a.keyId)).toHaveLength(6);
    // Another key is another retry.
    expect((await keyed('bulk-2')).json()).toMatchObject({ touched: 3 });
    expect(await jobsOf(a.keyId)).toHaveLength(9);
  });

  it('retries one job once under one Idempotency-Key, and refuses that key for another job', async () => {
    const a = await tenant();
    const [one, two] = await submitMany(a.key, 2);
    for (const id of [one!, two!]) await fail(id, 'INFERENCE_FAILED');
    const retry = (id: string, key: string) =>
      t.server.inject({ method: 'POST', url: `/v1/jobs/${id}/retry`, headers: { ...t.auth(a.key), 'idempotency-key': key } });
    const first = await retry(one!, 'r-1');
    expect(first.statusCode, first.body).toBe(202);
    const again = await retry(one!, 'r-1');
    expect(again.statusCode).toBe(202);
    expect(again.json().id).toBe(first.json().id);
    expect((await retry(two!, 'r-1')).json().code).toBe('IDEMPOTENCY_CONFLICT');
    expect(await jobsOf(a.keyId)).toHaveLength(3);
  });

  it('counts a retry that fails (its input object gone) as skipped and goes on with the others', async () => {
    const a = await tenant();
    const [lost, fine] = await submitMany(a.key, 2);
    for (const id of [lost!, fine!]) await fail(id, 'INFERENCE_FAILED');
    const missing = [{ name: 'features', datatype: 'FP32', shape: [1, 64], bytes: 256, key: `missing/${randomUUID()}` }];
    await t.ctx.pool.query('UPDATE jobs SET inputs = $2::jsonb WHERE id = $1', [lost, JSON.stringify(missing)]);
    expect(await bulkOk('retry', { filter: { keyId: a.keyId } }, a.key)).toEqual({ matched: 2, touched: 1, skipped: 1, truncated: false, dryRun: false });
    expect((await jobsOf(a.keyId)).map((j) => j.status)).toEqual(['failed', 'failed', 'queued']);
  });

  it("never retries another key's jobs", async () => {
    const a = await tenant();
    const b = await tenant();
    const [bJob] = await submitMany(b.key, 1);
    await fail(bJob!, 'INFERENCE_FAILED');
    expect(await bulkOk('retry', { filter: { keyId: b.keyId } }, a.key)).toMatchObject({ matched: 0, touched: 0 });
    expect(await jobsOf(b.keyId)).toHaveLength(1);
    expect(await jobsOf(a.keyId)).toHaveLength(0);
  });
});

describe('audit', () => {
  const auditFor = async (requestId: string) =>
    (await t.server.inject({ method: 'GET', url: '/v1/audit?limit=500', headers: t.auth() }))
      .json()
      .items.filter((e: { details: { requestId: string } }) => e.details.requestId === requestId);

  it('writes one entry per call with the filter and the counts; a dry run writes none', async () => {
    const a = await tenant();
    const ids = await submitMany(a.key, 2);
    const filter = { keyId: a.keyId, model: 'mlp' };
    const dry = randomUUID();
    expect((await bulk('cancel', { filter, dryRun: true }, a.key, dry)).statusCode).toBe(200);
    expect(await auditFor(dry)).toEqual([]);
    const cancel = randomUUID();
    expect((await bulk('cancel', { filter, limit: 10 }, a.key, cancel)).statusCode).toBe(200);
    expect(await auditFor(cancel)).toEqual([
      expect.objectContaining({
        action: 'jobs:bulk-canceled',
        actorKeyId: a.keyId,
        resource: 'jobs',
        details: { requestId: cancel, filter, limit: 10, matched: 2, touched: 2, skipped: 0, truncated: false },
      }),
    ]);
    const retry = randomUUID();
    expect((await bulk('retry', { filter: { keyId: a.keyId, status: 'canceled' } }, t.adminKey, retry)).statusCode).toBe(200);
    expect(await auditFor(retry)).toEqual([
      expect.objectContaining({
        action: 'jobs:bulk-retried',
        resource: 'jobs',
        details: { requestId: retry, filter: { keyId: a.keyId, status: 'canceled' }, limit: 1000, matched: 2, touched: 2, skipped: 0, truncated: false },
      }),
    ]);
    expect(await statuses(ids)).toEqual(['canceled', 'canceled']);
  });
});
