import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredTensor } from '@inferq/contracts';
import { buildTestApp, mlpInput, type TestApp } from './helpers.ts';

// Input segments (issue 45): the small inputs of a group of submits are one S3
// object, the rows naming it and an offset, so their bytes never pass through
// Postgres's WAL; a group whose segment cannot be written keeps them in its rows.

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
  expect((await t.registerModel('mlp')).statusCode).toBe(201);
});
afterAll(() => t.close());

const submit = (rows: number, seed: number) =>
  t.server.inject({ method: 'POST', url: '/v1/jobs', payload: { model: 'mlp', inputs: [mlpInput(rows, seed)] }, headers: t.auth() });
const row = async (id: string) =>
  (await t.ctx.pool.query<{ inputs: StoredTensor[]; input_data: Buffer | null }>('SELECT inputs, input_data FROM jobs WHERE id = $1', [id])).rows[0]!;
const download = async (id: string) => (await t.server.inject({ method: 'GET', url: `/v1/jobs/${id}/inputs/0`, headers: t.auth() })).rawPayload;
const bytesOf = (rows: number, seed: number) => Buffer.from(Float32Array.from(mlpInput(rows, seed).data).buffer);
const metric = async () => (await t.server.inject({ method: 'GET', url: '/metrics' })).body;

describe('input segments', () => {
  it('writes the inputs of a group of submits as one object, each row naming it and its offset, with no bytes in the row', async () => {
    const sizes = [1, 2, 3, 4, 5, 6];
    const ids = (await Promise.all(sizes.map((n) => submit(n, n)))).map((r) => {
      expect(r.statusCode, r.body).toBe(202);
      return r.json().id as string;
    });
    const rows = await Promise.all(ids.map(row));
    for (const r of rows) expect(r.input_data).toBeNull();
    const segments = new Set(rows.map((r) => r.inputs[0]!.segment));
    // Requests read in one turn join one group; a loaded box may split them over two.
    expect(segments.size).toBeLessThanOrEqual(2);
    for (const [i, id] of ids.entries()) expect(await download(id)).toEqual(bytesOf(sizes[i]!, sizes[i]!));
    expect(await metric()).toMatch(/inferq_input_segments_total\{outcome="written"\} [1-9]/);
  });

  it('reads a retry’s inputs out of the segment and writes them in its own group', async () => {
    const { id } = (await submit(2, 42)).json();
    const res = await t.server.inject({ method: 'POST', url: `/v1/jobs/${id}/retry`, headers: t.auth() });
    expect(res.statusCode, res.body).toBe(202);
    const [first, retry] = [await row(id), await row(res.json().id)];
    expect(retry.inputs[0]!.segment).toBeDefined();
    expect(retry.inputs[0]!.segment).not.toBe(first.inputs[0]!.segment);
    expect(await download(res.json().id)).toEqual(bytesOf(2, 42));
  });

  it('keeps a group’s inputs in its rows when its segment cannot be written, and counts it', async () => {
    const put = t.ctx.storage.putObject;
    t.ctx.storage.putObject = () => Promise.reject(new Error('object storage is down'));
    try {
      const res = await submit(3, 7);
      expect(res.statusCode, res.body).toBe(202);
      const r = await row(res.json().id);
      expect(r.inputs[0]!.segment).toBeUndefined();
      expect(r.input_data).toEqual(bytesOf(3, 7));
    } finally {
      t.ctx.storage.putObject = put;
    }
    expect(await metric()).toMatch(/inferq_input_segments_total\{outcome="failed"\} 1/);
    expect(await download((await submit(1, 8)).json().id)).toEqual(bytesOf(1, 8));
  });
});
