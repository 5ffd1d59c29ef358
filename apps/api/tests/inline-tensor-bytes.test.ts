import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeTensorBase64, type StoredTensor } from '@inferq/contracts';
import { completeJobs, dropInputs, ensureJobPartitions, failJobs, findJob, insertJobs, purgeJobs, startJobs } from '@inferq/db';
import { newTestJob, testBatchRun } from '@inferq/test-utils';
import { buildTestApp, mlpInput, type TestApp } from './helpers.ts';

// Inline tensors as bytes (issue 18, migration 0022): a job's inline inputs are
// kept raw in input_data, its outputs in output_data, the jsonb naming each
// tensor's offset (`at`); rows written before keep base64 in `b64` and still read.
// Inputs are kept so with INPUT_SEGMENTS=false, and when a group's segment
// cannot be written (input-segments.test.ts has the segments).

let t: TestApp;
let owner: string;
beforeAll(async () => {
  t = await buildTestApp({ inputSegments: false });
  expect((await t.registerModel('mlp')).statusCode).toBe(201);
  owner = (await t.ctx.pool.query<{ id: string }>(`SELECT id FROM api_keys WHERE name = 'admin'`)).rows[0]!.id;
});
afterAll(() => t.close());

const IHCL = 'inference-header-content-length';
const FEATURES = { name: 'features', datatype: 'FP32' as const };
const bytesOf = (values: number[]) => new Uint8Array(Float32Array.from(values).buffer);
const raw = async (id: string) =>
  (await t.ctx.pool.query('SELECT inputs, input_data, outputs, output_data FROM jobs WHERE id = $1', [id])).rows[0] as {
    inputs: StoredTensor[];
    input_data: Buffer | null;
    outputs: StoredTensor[] | null;
    output_data: Buffer | null;
  };
const get = (url: string) => t.server.inject({ method: 'GET', url, headers: t.auth() });
const storedInput = async (id: string, i = 0) => new Uint8Array((await get(`/v1/jobs/${id}/inputs/${i}`)).rawPayload);

/** A framed submit: the JSON header with each input's binary_data_size, then the raw bytes. */
function framedSubmit(rows: number, bytes: Uint8Array) {
  const header = Buffer.from(
    JSON.stringify({ model: 'mlp', inputs: [{ ...FEATURES, shape: [rows, 64], parameters: { binary_data_size: bytes.byteLength } }] }),
  );
  return t.server.inject({
    method: 'POST',
    url: '/v1/jobs',
    payload: Buffer.concat([header, bytes]),
    headers: { ...t.auth(), 'content-type': 'application/octet-stream', [IHCL]: String(header.byteLength) },
  });
}

/** A job claimed by a batch, ready for completeJobs. */
async function claimed(inputs: StoredTensor[]): Promise<{ id: string; batchId: string; claim: Awaited<ReturnType<typeof startJobs>> }> {
  const job = newTestJob(owner, { inputs });
  await insertJobs(t.ctx.pool, [job]);
  const batchId = randomUUID();
  const claim = await startJobs(t.ctx.pool, { ids: [job.id], workerId: 'w-bytes', batchId, batchSize: 1 });
  return { id: job.id, batchId, claim };
}

describe('inline tensor bytes', () => {
  it('adds input_data and output_data, stored EXTERNAL, to jobs, every partition and the partitions created later', async () => {
    const created = await ensureJobPartitions(t.ctx.pool, { aheadDays: 14 });
    expect(created.length).toBeGreaterThan(0);
    const { rows } = await t.ctx.pool.query<{ rel: string; attname: string; attstorage: string; atttypid: string }>(
      `SELECT c.relname AS rel, a.attname, a.attstorage, a.atttypid::regtype::text AS atttypid
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
        WHERE a.attname IN ('input_data', 'output_data') AND NOT a.attisdropped
          AND (c.oid = 'jobs'::regclass OR c.oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'jobs'::regclass))`,
    );
    const parts = await t.ctx.pool.query(`SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'jobs'::regclass`);
    expect(rows).toHaveLength(2 * (1 + parts.rows[0].n));
    for (const name of ['jobs', 'jobs_legacy', ...created]) expect(rows.filter((r) => r.rel === name).map((r) => r.attname)).toHaveLength(2);
    expect(rows.every((r) => r.attstorage === 'e' && r.atttypid === 'bytea')).toBe(true);
  });

  it("keeps a framed submit's raw bytes in input_data, the jsonb naming their offset, with no base64 anywhere", async () => {
    const input = mlpInput(2, 41);
    const bytes = bytesOf(input.data);
    const res = await framedSubmit(2, bytes);
    expect(res.statusCode, res.body).toBe(202);
    const row = await raw(res.json().id);
    expect(row.inputs).toEqual([{ ...FEATURES, shape: [2, 64], bytes: bytes.byteLength, at: 0 }]);
    expect(JSON.stringify(row.inputs)).not.toContain('b64');
    expect(new Uint8Array(row.input_data!)).toEqual(bytes);
    expect(await storedInput(res.json().id)).toEqual(bytes);
    // A JSON submit's base64 is decoded once and kept as the same bytes.
    const json = await t.server.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: { model: 'mlp', inputs: [{ ...input, data: encodeTensorBase64(bytes) }] },
      headers: t.auth(),
    });
    expect(json.statusCode).toBe(202);
    const jsonRow = await raw(json.json().id);
    expect(jsonRow.inputs).toEqual(row.inputs);
    expect(new Uint8Array(jsonRow.input_data!)).toEqual(bytes);
  });

  it("reads a job's inline input bytes only for a download or a retry; a view (a poll) gets their descriptions", async () => {
    const bytes = bytesOf(mlpInput(1, 7).data);
    const res = await framedSubmit(1, bytes);
    const id = res.json().id as string;
    const view = (await findJob(t.ctx.pool, id, null))!.inputs[0]!;
    expect(view).toEqual({ ...FEATURES, shape: [1, 64], bytes: bytes.byteLength });
    expect(new Uint8Array((await findJob(t.ctx.pool, id, null, { inputBytes: true }))!.inputs[0]!.data!)).toEqual(bytes);
    expect((await get(`/v1/jobs/${id}`)).json().inputs).toEqual([{ ...FEATURES, shape: [1, 64], bytes: bytes.byteLength }]);
    expect(await storedInput(id)).toEqual(bytes);
  });

  it("gives each job of a group insert its own slice of the group's bytes, and the claim hands them back", async () => {
    const a = bytesOf([1, 2, 3]);
    const b = bytesOf([4]);
    const c = bytesOf([5, 6]);
    const head = (shape: number[], bytes: number) => ({ ...FEATURES, shape, bytes });
    const jobs = [
      newTestJob(owner, {
        inputs: [
          { ...head([3], 12), data: a },
          { ...head([1], 4), data: b },
        ],
      }),
      newTestJob(owner, { inputs: [{ ...head([100], 400), key: 'jobs/elsewhere.bin' }] }),
      newTestJob(owner, {
        inputs: [
          { ...head([100], 400), key: 'jobs/other.bin' },
          { ...head([2], 8), data: c },
        ],
      }),
    ];
    expect((await insertJobs(t.ctx.pool, jobs)).size).toBe(3);
    const rows = await Promise.all(jobs.map((j) => raw(j.id)));
    expect(rows.map((r) => r.input_data && new Uint8Array(r.input_data))).toEqual([new Uint8Array([...a, ...b]), null, c]);
    expect(rows[0]!.inputs.map((x) => x.at)).toEqual([0, 12]);
    expect(rows[2]!.inputs.map((x) => x.at)).toEqual([undefined, 0]);
    // An empty tensor adds no bytes, and still reads as one.
    const empty = newTestJob(owner, { inputs: [{ ...head([0], 0), data: new Uint8Array(0) }] });
    await insertJobs(t.ctx.pool, [empty]);
    expect((await raw(empty.id)).input_data).toBeNull();
    expect(await t.tensors.readTensor((await findJob(t.ctx.pool, empty.id, null))!.inputs[0]!)).toEqual(new Uint8Array(0));
    const claim = await startJobs(t.ctx.pool, { ids: jobs.map((j) => j.id), workerId: 'w-bytes', batchId: randomUUID(), batchSize: 3 });
    const inputs = jobs.map((j) => claim.get(j.id)!.inputs);
    expect(await Promise.all([inputs[0]![0]!, inputs[0]![1]!, inputs[2]![1]!].map((x) => t.tensors.readTensor(x)))).toEqual([a, b, c]);
    expect(inputs[1]).toEqual([{ ...head([100], 400), key: 'jobs/elsewhere.bin' }]);
  });

  it('writes outputs to output_data in one statement, answered as JSON, base64 and binary from the bytes', async () => {
    const { id, batchId } = await claimed([{ ...FEATURES, shape: [1], bytes: 4, data: bytesOf([1]) }]);
    const out = bytesOf([1.5, -2]);
    const logits = { name: 'logits', datatype: 'FP32' as const, shape: [1, 2], bytes: 8 };
    expect(
      await completeJobs(t.ctx.pool, testBatchRun(batchId), [{ attempt: 1, id, outputs: [{ ...logits, data: out }], inferMs: 1, items: 1, deviceMs: 1 }]),
    ).toEqual(new Set([id]));
    const row = await raw(id);
    expect(row.outputs).toEqual([{ ...logits, at: 0 }]);
    expect(new Uint8Array(row.output_data!)).toEqual(out);
    expect((await get(`/v1/jobs/${id}`)).json().outputs).toEqual([{ ...logits, data: [1.5, -2] }]);
    expect((await get(`/v1/jobs/${id}?encoding=base64`)).json().outputs).toEqual([{ ...logits, data: encodeTensorBase64(out) }]);
    expect(new Uint8Array((await get(`/v1/jobs/${id}/outputs/0`)).rawPayload)).toEqual(out);
  });

  it('answers outputs at any offset in the row: an INT64 after 3 bytes of UINT8', async () => {
    const { id, batchId } = await claimed([{ ...FEATURES, shape: [1], bytes: 4, data: bytesOf([1]) }]);
    const flags = { name: 'flags', datatype: 'UINT8' as const, shape: [3], bytes: 3 };
    const ids = { name: 'ids', datatype: 'INT64' as const, shape: [2], bytes: 16 };
    const outputs = [
      { ...flags, data: new Uint8Array([1, 2, 3]) },
      { ...ids, data: new Uint8Array(BigInt64Array.from([5n, -6n]).buffer) },
    ];
    await completeJobs(t.ctx.pool, testBatchRun(batchId), [{ attempt: 1, id, outputs, inferMs: 1, items: 1, deviceMs: 1 }]);
    expect((await raw(id)).outputs!.map((o) => o.at)).toEqual([0, 3]);
    expect((await get(`/v1/jobs/${id}`)).json().outputs).toEqual([
      { ...flags, data: [1, 2, 3] },
      { ...ids, data: [5, -6] },
    ]);
  });

  it('reads rows written before the migration: base64 in the jsonb, no bytes column (API and worker claim)', async () => {
    const bytes = bytesOf([7, 8]);
    const { id, batchId, claim } = await claimed([{ ...FEATURES, shape: [2], bytes: 8, b64: encodeTensorBase64(bytes) }]);
    expect((await raw(id)).input_data).toBeNull();
    expect(await t.tensors.readTensor(claim.get(id)!.inputs![0]!)).toEqual(bytes);
    const logits = { name: 'logits', datatype: 'FP32' as const, shape: [1, 2], bytes: 8 };
    await completeJobs(t.ctx.pool, testBatchRun(batchId), [
      { attempt: 1, id, outputs: [{ ...logits, b64: encodeTensorBase64(bytes) }], inferMs: 1, items: 1, deviceMs: 1 },
    ]);
    expect((await raw(id)).output_data).toBeNull();
    expect((await get(`/v1/jobs/${id}`)).json().outputs).toEqual([{ ...logits, data: [7, 8] }]);
    expect((await get(`/v1/jobs/${id}?encoding=base64`)).json().outputs[0].data).toBe(encodeTensorBase64(bytes));
    expect(new Uint8Array((await get(`/v1/jobs/${id}/outputs/0`)).rawPayload)).toEqual(bytes);
    expect(await storedInput(id)).toEqual(bytes);
  });

  it('carries inline bytes to a retry, and clears them on input drop and purge', async () => {
    const bytes = bytesOf([3, 1, 4]);
    const failed = await claimed([{ ...FEATURES, shape: [3], bytes: 12, data: bytes }]);
    await failJobs(t.ctx.pool, [{ id: failed.id, code: 'INTERNAL', message: 'x', final: true, attempt: 1 }], testBatchRun(failed.batchId));
    const retry = await t.server.inject({ method: 'POST', url: `/v1/jobs/${failed.id}/retry`, headers: t.auth() });
    expect(retry.statusCode, retry.body).toBe(202);
    expect(await storedInput(retry.json().id)).toEqual(bytes);
    expect(new Uint8Array((await raw(retry.json().id)).input_data!)).toEqual(bytes);

    const done = await claimed([{ ...FEATURES, shape: [3], bytes: 12, data: bytes }]);
    const out = { name: 'logits', datatype: 'FP32' as const, shape: [1], bytes: 4, data: bytesOf([9]) };
    await completeJobs(t.ctx.pool, testBatchRun(done.batchId), [{ attempt: 1, id: done.id, outputs: [out], inferMs: 1, items: 1, deviceMs: 1 }]);
    expect((await dropInputs(t.ctx.pool, [done.id])).ids).toEqual([done.id]);
    expect(await raw(done.id)).toMatchObject({ inputs: [], input_data: null, outputs: [{ name: 'logits', at: 0 }] });
    expect(new Uint8Array((await findJob(t.ctx.pool, done.id, null))!.outputs![0]!.data!)).toEqual(bytesOf([9]));
    expect((await purgeJobs(t.ctx.pool, [done.id], 'deleted')).ids).toEqual([done.id]);
    expect(await raw(done.id)).toMatchObject({ inputs: [], input_data: null, outputs: null, output_data: null });
  });
});
