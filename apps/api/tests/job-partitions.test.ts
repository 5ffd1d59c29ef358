import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeTensorBase64 } from '@inferq/contracts';
import { createLogger } from '@inferq/core';
import {
  boundTime,
  dayBound,
  deleteJobs,
  ensureJobPartitions,
  findJobByIdempotencyKey,
  insertCachedJob,
  insertJobs,
  jobPartitionName,
  listJobPartitions,
  runMigrations,
  utcDayStart,
  type NewJob,
} from '@inferq/db';
import { createRedisConnection } from '@inferq/queue';
import { createTestContext, newTestJob, testJobId, type TestContext } from '@inferq/test-utils';
import { createPartitionMaintainer } from '../src/background/partition-maintainer.ts';
import { buildTestApp, mlpInput, type TestApp } from './helpers.ts';

// jobs partitioned by RANGE (id) (migrations 0016–0019): the layout a fresh
// schema gets, the partitions the API creates ahead, Idempotency-Keys in
// job_idempotency, and the conversion of a table that holds rows.

const DAY_MS = 86_400_000;
const today = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS);
const daysAhead = (n: number) => new Date(today.getTime() + n * DAY_MS);

let t: TestApp;
let owner: string;
beforeAll(async () => {
  t = await buildTestApp();
  expect((await t.registerModel('mlp')).statusCode).toBe(201);
  owner = (await t.ctx.pool.query<{ id: string }>(`SELECT id FROM api_keys WHERE name = 'admin'`)).rows[0]!.id;
});
afterAll(() => t.close());

const newJob = (over: Partial<NewJob> = {}): NewJob => newTestJob(owner, over);
const partitionOf = async (id: string) =>
  (await t.ctx.pool.query<{ p: string }>('SELECT tableoid::regclass::text AS p FROM jobs WHERE id = $1', [id])).rows[0]?.p;
const submit = (body: object, headers: Record<string, string> = {}) =>
  t.server.inject({ method: 'POST', url: '/v1/jobs', payload: body, headers: { ...t.auth(), ...headers } });

describe('the partitioned jobs table', () => {
  it('is partitioned by id: jobs_legacy up to the bound 0016 chose, then contiguous daily partitions', async () => {
    const kind = await t.ctx.pool.query(`SELECT c.relkind::text, pg_get_partkeydef(c.oid) AS key FROM pg_class c WHERE c.oid = 'jobs'::regclass`);
    expect(kind.rows[0]).toEqual({ relkind: 'p', key: 'RANGE (id)' });
    const parts = await listJobPartitions(t.ctx.pool);
    expect(parts[0]).toMatchObject({ name: 'jobs_legacy', from: null, to: dayBound(daysAhead(7)) });
    expect(parts.slice(1, 4).map((p) => p.name)).toEqual([7, 8, 9].map((n) => jobPartitionName(daysAhead(n))));
    for (let i = 1; i < parts.length; i++) expect(parts[i]!.from).toBe(parts[i - 1]!.to);
    expect(parts.every((p) => p.bytes > 0)).toBe(true);
    // No DEFAULT partition: every bound is a range.
    expect(parts.every((p) => p.to !== null)).toBe(true);
    // The metric the InferqJobPartitionsRunningOut alert reads: the newest partition ends days from now.
    const metrics = (await t.server.inject({ method: 'GET', url: '/metrics' })).body;
    const ahead = Number(/^inferq_job_partitions_ahead_seconds (\S+)$/m.exec(metrics)?.[1]);
    expect(ahead).toBeGreaterThan(7 * 86_400);
    expect(boundTime(dayBound(daysAhead(1))).getTime()).toBe(utcDayStart(daysAhead(1)).getTime());
  });

  it('dayBound is the lowest UUIDv7 of the day', () => {
    expect(dayBound(new Date('2026-11-26T15:00:00Z'))).toBe('01a21526-e400-0000-0000-000000000000');
    expect(jobPartitionName(new Date('2026-11-26T23:59:59Z'))).toBe('jobs_p20261126');
    const lastOfDay = testJobId(new Date('2026-11-26T23:59:59.999Z'));
    expect(lastOfDay >= dayBound(new Date('2026-11-26T00:00:00Z')) && lastOfDay < dayBound(new Date('2026-11-27T00:00:00Z'))).toBe(true);
  });

  it('creates the days ahead that are missing, idempotently and safely from several callers at once', async () => {
    const at = daysAhead(40);
    const runs = await Promise.all([1, 2, 3].map(() => ensureJobPartitions(t.ctx.pool, { aheadDays: 2, now: at })));
    expect(runs.flat().sort()).toEqual([40, 41, 42].map((n) => jobPartitionName(daysAhead(n))));
    expect(await ensureJobPartitions(t.ctx.pool, { aheadDays: 2, now: at })).toEqual([]);
    // Days jobs_legacy or the migration's partitions cover are left alone.
    expect(await ensureJobPartitions(t.ctx.pool, { aheadDays: 9 })).toEqual([]);
    // A created partition has the parent's indexes and storage.
    const name = jobPartitionName(at);
    const idx = await t.ctx.pool.query(`SELECT count(*)::int AS n FROM pg_index WHERE indrelid = $1::regclass`, [name]);
    const parent = await t.ctx.pool.query(`SELECT count(*)::int AS n FROM pg_index WHERE indrelid = 'jobs'::regclass`);
    expect(idx.rows[0].n).toBe(parent.rows[0].n);
    const storage = await t.ctx.pool.query(`SELECT attstorage FROM pg_attribute WHERE attrelid = $1::regclass AND attname = 'inputs'`, [name]);
    expect(storage.rows[0].attstorage).toBe('e');
  });

  it('the API maintainer ensures partitions under its lease', async () => {
    const redis = createRedisConnection(t.ctx.env.REDIS_URL!, 'producer');
    await once(redis, 'ready');
    const maintainer = createPartitionMaintainer({
      pool: t.ctx.pool,
      redis,
      prefix: t.ctx.prefix,
      logger: createLogger({ service: 'test', level: 'warn', pretty: false }),
      aheadDays: 11,
    });
    try {
      expect(await maintainer.runOnce()).toEqual([10, 11].map((n) => jobPartitionName(daysAhead(n))));
      expect(await maintainer.ensureNow()).toEqual([]);
    } finally {
      redis.disconnect();
    }
  });

  it('puts a job into the partition of its id’s day, fails loudly where no partition exists, and reads one partition by id', async () => {
    const now = newJob();
    const later = newJob({ id: testJobId(new Date(daysAhead(40).getTime() + 3_600_000)) });
    expect(await insertJobs(t.ctx.pool, [now, later])).toEqual(new Set([now.id, later.id]));
    expect(await partitionOf(now.id)).toBe('jobs_legacy');
    expect(await partitionOf(later.id)).toBe(jobPartitionName(daysAhead(40)));
    await expect(insertJobs(t.ctx.pool, [newJob({ id: testJobId(daysAhead(400)) })])).rejects.toThrow(/no partition/);

    const plan = await t.ctx.pool.query(`EXPLAIN SELECT * FROM jobs WHERE id = '${later.id}'`);
    const scans = plan.rows.map((r) => r['QUERY PLAN'] as string).filter((l) => / on jobs_/.test(l));
    expect(scans).toHaveLength(1);
    expect(scans[0]).toContain(jobPartitionName(daysAhead(40)));
    // The API's reads by id go through a parameter: pruned when the plan runs.
    const client = await t.ctx.pool.connect();
    try {
      await client.query(`PREPARE by_id(uuid) AS SELECT * FROM jobs WHERE id = $1`);
      await client.query(`SET plan_cache_mode = force_generic_plan`);
      const generic = await client.query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE by_id('${later.id}')`);
      const lines = generic.rows.map((r) => r['QUERY PLAN'] as string);
      expect(lines.some((l) => /Subplans Removed: [1-9]/.test(l))).toBe(true);
      expect(lines.filter((l) => / on jobs_/.test(l))).toHaveLength(1);
    } finally {
      await client.query('RESET plan_cache_mode; DEALLOCATE by_id').catch(() => {});
      client.release();
    }
  });
});

describe('Idempotency-Keys in job_idempotency', () => {
  it('one job per key, whether the repeats come one after the other or at once', async () => {
    const body = { model: 'mlp', inputs: [mlpInput(1, 21)] };
    const first = await submit(body, { 'idempotency-key': 'p-1' });
    const second = await submit(body, { 'idempotency-key': 'p-1' });
    expect(second.json().id).toBe(first.json().id);
    const together = await Promise.all(Array.from({ length: 12 }, () => submit({ model: 'mlp', inputs: [mlpInput(1, 22)] }, { 'idempotency-key': 'p-2' })));
    expect(together.every((r) => r.statusCode === 202)).toBe(true);
    expect(new Set(together.map((r) => r.json().id)).size).toBe(1);
    const rows = await t.ctx.pool.query(`SELECT idempotency_key, count(*)::int AS n FROM jobs WHERE idempotency_key IN ('p-1', 'p-2') GROUP BY 1 ORDER BY 1`);
    expect(rows.rows).toEqual([
      { idempotency_key: 'p-1', n: 1 },
      { idempotency_key: 'p-2', n: 1 },
    ]);
    const keys = await t.ctx.pool.query(`SELECT idempotency_key, job_id FROM job_idempotency WHERE idempotency_key IN ('p-1', 'p-2') ORDER BY 1`);
    expect(keys.rows).toEqual([
      { idempotency_key: 'p-1', job_id: first.json().id },
      { idempotency_key: 'p-2', job_id: together[0]!.json().id },
    ]);
  });

  it('insertJobs returns only the jobs whose key it claimed, in one batch too; deleteJobs frees the key', async () => {
    const a = newJob({ idempotencyKey: 'p-3' });
    const b = newJob({ idempotencyKey: 'p-3' });
    const c = newJob();
    expect(await insertJobs(t.ctx.pool, [a, b, c])).toEqual(new Set([a.id, c.id]));
    expect(await insertJobs(t.ctx.pool, [newJob({ idempotencyKey: 'p-3' })])).toEqual(new Set());
    expect((await findJobByIdempotencyKey(t.ctx.pool, owner, 'p-3'))?.id).toBe(a.id);
    await deleteJobs(t.ctx.pool, [a.id]);
    expect(await findJobByIdempotencyKey(t.ctx.pool, owner, 'p-3')).toBeUndefined();
    const d = newJob({ idempotencyKey: 'p-3' });
    expect(await insertJobs(t.ctx.pool, [d])).toEqual(new Set([d.id]));
  });

  it('a response-cache hit claims its key; a miss leaves the key free', async () => {
    const output = { name: 'out', datatype: 'FP32', shape: [1, 1], bytes: 4, b64: encodeTensorBase64(new Uint8Array(new Float32Array([1]).buffer)) };
    const source = newJob({ inputSha256: 'h-1' });
    await insertJobs(t.ctx.pool, [source]);
    await t.ctx.pool.query(`UPDATE jobs SET status = 'succeeded', outputs = $2, finished_at = now() WHERE id = $1`, [source.id, JSON.stringify([output])]);
    const miss = newJob({ idempotencyKey: 'p-4' });
    expect(await insertCachedJob(t.ctx.pool, { ...miss, inputSha256: 'h-other' })).toBe(false);
    expect(await findJobByIdempotencyKey(t.ctx.pool, owner, 'p-4')).toBeUndefined();
    const hit = newJob({ idempotencyKey: 'p-4' });
    expect(await insertCachedJob(t.ctx.pool, { ...hit, inputSha256: 'h-1' })).toBe(true);
    expect(await findJobByIdempotencyKey(t.ctx.pool, owner, 'p-4')).toMatchObject({ id: hit.id, status: 'succeeded', cachedFrom: source.id });
    expect(await insertCachedJob(t.ctx.pool, { ...newJob({ idempotencyKey: 'p-4' }), inputSha256: 'h-1' })).toBe(false);
    expect(await insertJobs(t.ctx.pool, [newJob({ idempotencyKey: 'p-4' })])).toEqual(new Set());
  });
});

describe('converting a table that holds rows (0016–0019), in the two steps of the upgrade', () => {
  let ctx: TestContext;
  // A schema migrated up to 0015, the last migration before partitioning.
  beforeAll(async () => {
    ctx = await createTestContext({ migrateUpTo: '0015_retire_model_versions' });
  });
  afterAll(() => ctx?.close());

  it('keeps every row, key, delivery and index, and builds no index anew', async () => {
    const pool = ctx.pool;
    const key = (
      await pool.query<{ id: string }>(`INSERT INTO api_keys (id, name, prefix, secret_hash, scopes) VALUES ($1, 'k', 'p', 'h', '{}') RETURNING id`, [
        testJobId(),
      ])
    ).rows[0]!.id;
    // 5,000 jobs over the last 30 days (UUIDv7 ids of their creation time), every fifth with a key, every tenth with a delivery.
    await pool.query(
      `INSERT INTO jobs (id, owner_key_id, model_name, model_version, priority, status, idempotency_key, inputs, created_at, finished_at, webhook_url)
       SELECT (substr(h, 1, 8) || '-' || substr(h, 9, 4) || substr(gen_random_uuid()::text, 14))::uuid, $1, 'mlp', 1, 'normal',
              CASE WHEN g % 3 = 0 THEN 'queued' ELSE 'succeeded' END, CASE WHEN g % 5 = 0 THEN 'k-' || g END, '[]', at,
              CASE WHEN g % 3 <> 0 THEN at END, CASE WHEN g % 10 = 0 THEN 'http://127.0.0.1:9/h' END
         FROM generate_series(1, 5000) g,
              LATERAL (SELECT now() - g * interval '518 s' AS at) t,
              LATERAL (SELECT lpad(to_hex((extract(epoch FROM at) * 1000)::bigint), 12, '0') AS h) x`,
      [key],
    );
    await pool.query(
      `INSERT INTO webhook_deliveries (id, job_id, attempt, url, status_code, duration_ms)
       SELECT gen_random_uuid(), id, 1, webhook_url, 200, 5 FROM jobs WHERE webhook_url IS NOT NULL`,
    );
    const indexes = await pool.query<{ oid: number; name: string }>(
      `SELECT indexrelid::int AS oid, indexrelid::regclass::text AS name FROM pg_index WHERE indrelid = 'jobs'::regclass ORDER BY 2`,
    );

    // Step 1 of the upgrade (docs/deploy.md), then both releases insert while the table is not yet partitioned.
    expect(await runMigrations(pool, undefined, { upTo: '0017_validate_legacy_bound' })).toEqual(['0016_bound_legacy_jobs', '0017_validate_legacy_bound']);
    // The previous release's insert (its ON CONFLICT names 0003's unique index): 0016's trigger records its key.
    await pool.query(
      `INSERT INTO jobs (id, owner_key_id, model_name, model_version, priority, status, idempotency_key, inputs)
       VALUES ($1, $2, 'mlp', 1, 'normal', 'queued', 'k-old', '[]') ON CONFLICT (owner_key_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING`,
      [testJobId(), key],
    );
    const mid = newJob({ ownerKeyId: key, idempotencyKey: 'k-mid' });
    const taken = ['k-old', 'k-10'].map((k) => newJob({ ownerKeyId: key, idempotencyKey: k }));
    expect(await insertJobs(pool, [mid, ...taken])).toEqual(new Set([mid.id]));
    const before = await pool.query(`SELECT md5(string_agg(j::text, ',' ORDER BY id)) AS digest, count(*)::int AS n FROM jobs j`);

    // Step 3: the conversion.
    expect(await runMigrations(pool, undefined, { upTo: '0019_validate_webhook_job_fk' })).toEqual(['0018_partition_jobs', '0019_validate_webhook_job_fk']);

    const after = await pool.query(`SELECT md5(string_agg(j::text, ',' ORDER BY id)) AS digest, count(*)::int AS n FROM jobs j`);
    expect(after.rows[0]).toEqual(before.rows[0]);
    expect(before.rows[0].n).toBe(5002);
    expect((await pool.query(`SELECT count(*)::int AS n FROM jobs_legacy`)).rows[0].n).toBe(5002);
    // Each row by id, through the parent.
    const unreadable = await pool.query(`SELECT count(*)::int AS n FROM jobs_legacy l WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = l.id)`);
    expect(unreadable.rows[0].n).toBe(0);
    // Every key moved to job_idempotency, and it answers.
    const keys = await pool.query(`SELECT count(*)::int AS n FROM job_idempotency i JOIN jobs j ON j.id = i.job_id AND j.idempotency_key = i.idempotency_key`);
    expect(keys.rows[0].n).toBe(1002);
    // The index of every earlier migration is on the parent under its old name, valid, its jobs_legacy partition the very old index.
    const parent = await pool.query<{ name: string; valid: boolean }>(
      `SELECT indexrelid::regclass::text AS name, indisvalid AS valid FROM pg_index WHERE indrelid = 'jobs'::regclass ORDER BY 1`,
    );
    const kept = indexes.rows.filter((i) => i.name !== 'jobs_owner_key_id_idempotency_key_key');
    expect(parent.rows).toEqual(kept.map((i) => ({ name: i.name, valid: true })));
    const legacy = await pool.query<{ oid: number }>(`SELECT indexrelid::int AS oid FROM pg_index WHERE indrelid = 'jobs_legacy'::regclass ORDER BY 1`);
    expect(legacy.rows.map((r) => r.oid)).toEqual(kept.map((i) => i.oid).sort((a, b) => a - b));
    // Foreign keys hold, validated.
    const fks = await pool.query(
      `SELECT conname, convalidated FROM pg_constraint WHERE contype = 'f' AND conparentid = 0
          AND (conrelid = 'webhook_deliveries'::regclass OR conrelid = 'jobs'::regclass) ORDER BY 1`,
    );
    expect(fks.rows).toEqual([
      { conname: 'jobs_owner_key_id_fkey', convalidated: true },
      { conname: 'webhook_deliveries_job_id_fkey', convalidated: true },
    ]);
    await expect(
      pool.query(`INSERT INTO webhook_deliveries (id, job_id, attempt, url, duration_ms) VALUES (gen_random_uuid(), $1, 1, 'u', 1)`, [testJobId()]),
    ).rejects.toThrow(/foreign key/);
    const oneWithDeliveries = (await pool.query(`SELECT job_id FROM webhook_deliveries LIMIT 1`)).rows[0].job_id;
    await pool.query(`DELETE FROM jobs WHERE id = $1`, [oneWithDeliveries]);
    expect((await pool.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE job_id = $1`, [oneWithDeliveries])).rows[0].n).toBe(0);
    // The later migrations (0022 adds the inline tensor bytes this release's reads name), then the key answers.
    expect(await runMigrations(pool)).toContain('0022_store_inline_tensor_bytes');
    expect((await findJobByIdempotencyKey(pool, key, 'k-500'))?.idempotencyKey).toBe('k-500');
    // New jobs go in, an old key is still taken, and the partitions ahead follow.
    const fresh = newJob({ ownerKeyId: key, idempotencyKey: 'k-new' });
    expect(await insertJobs(pool, [fresh, newJob({ ownerKeyId: key, idempotencyKey: 'k-5' })])).toEqual(new Set([fresh.id]));
    expect((await ensureJobPartitions(pool, { aheadDays: 12 })).length).toBeGreaterThan(0);
  });
});
