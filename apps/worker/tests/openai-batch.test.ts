import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, demoModel, mlpJob, startStack, waitFor, type Stack } from '@inferq/test-utils';

// The Batch API end to end with OpenAI's own client, unchanged: a JSONL file
// uploaded, a batch created over it, polled to its end, its output and error
// files downloaded; a real worker runs the jobs.

let stack: Stack;
let openai: OpenAI;
beforeAll(async () => {
  // The file sweep every second, so expired files go within the test.
  stack = await startStack({ apiEnv: { FILE_SWEEP_INTERVAL_MS: '1000' } });
  await stack.registerModel('mlp');
  await stack.registerModel('encoder', {}, 'transformer', demoModel('transformer').tokenizerPath!);
  await stack.startWorker();
  await stack.waitUntilServed('mlp');
  await stack.waitUntilServed('encoder');
  openai = new OpenAI({ baseURL: `${stack.baseUrl}/v1`, apiKey: ADMIN_KEY, maxRetries: 0 });
});
afterAll(() => stack?.close());

// OpenAI's client types `endpoint` as OpenAI's own paths; inferq's is sent as it is.
const JOBS_ENDPOINT = '/v1/jobs' as '/v1/embeddings';
const line = (customId: string, body: object) => JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/jobs', body });
const upload = async (lines: string[], name = 'requests.jsonl') =>
  openai.files.create({ file: await toFile(Buffer.from(lines.join('\n') + '\n'), name), purpose: 'batch' });

async function waitForEnd(id: string, timeoutMs = 60_000): Promise<OpenAI.Batches.Batch> {
  let batch: OpenAI.Batches.Batch | undefined;
  await waitFor(
    async () => {
      batch = await openai.batches.retrieve(id);
      return ['completed', 'failed', 'expired', 'cancelled'].includes(batch.status);
    },
    { timeoutMs, intervalMs: 200, what: () => `batch ${id} to end (now ${batch?.status}, ${JSON.stringify(batch?.request_counts)})` },
  );
  return batch!;
}

const jsonl = async (fileId: string) =>
  (await (await openai.files.content(fileId)).text())
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id: string; custom_id: string; response: { status_code: number; body: Record<string, unknown> } | null; error: unknown });

describe('the Batch API with the openai client', () => {
  it('runs every line as a job and answers each in the output or the error file, keyed by custom_id', async () => {
    const good = Array.from({ length: 12 }, (_, i) => line(`req-${i}`, mlpJob(i)));
    const wrongShape = line('bad-shape', { model: 'mlp', inputs: [{ name: 'features', datatype: 'FP32', shape: [1, 3], data: [1, 2, 3] }] });
    const file = await upload([...good.slice(0, 6), '', wrongShape, ...good.slice(6)]);
    expect(file).toMatchObject({ object: 'file', purpose: 'batch', filename: 'requests.jsonl', status: 'processed' });
    expect((await openai.files.retrieve(file.id)).bytes).toBe(file.bytes);

    const created = await openai.batches.create({ input_file_id: file.id, endpoint: JOBS_ENDPOINT, completion_window: '24h', metadata: { run: 'test' } });
    expect(created).toMatchObject({ object: 'batch', status: 'validating', input_file_id: file.id, metadata: { run: 'test' } });
    const batch = await waitForEnd(created.id);
    expect(batch.status, JSON.stringify(batch)).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 13, completed: 12, failed: 1 });
    expect(batch.completed_at).toBeGreaterThanOrEqual(batch.created_at);

    const output = await jsonl(batch.output_file_id!);
    expect(output.map((o) => o.custom_id).sort()).toEqual(good.map((_, i) => `req-${i}`).sort());
    for (const o of output) {
      expect(o.response!.status_code).toBe(200);
      expect(o.response!.body).toMatchObject({ status: 'succeeded', model: 'mlp', metadata: { 'inferq.batch_id': batch.id, 'inferq.custom_id': o.custom_id } });
      expect((o.response!.body.outputs as unknown[]).length).toBeGreaterThan(0);
    }
    const errors = await jsonl(batch.error_file_id!);
    expect(errors).toEqual([
      expect.objectContaining({
        custom_id: 'bad-shape',
        response: expect.objectContaining({ status_code: 400, body: { error: expect.objectContaining({ code: 'INPUT_SHAPE_MISMATCH' }) } }),
      }),
    ]);
    // The jobs ran below interactive traffic.
    const { rows } = await stack.ctx.pool.query<{ priority: string }>(`SELECT DISTINCT priority FROM jobs WHERE metadata->>'inferq.batch_id' = $1`, [batch.id]);
    expect(rows).toEqual([{ priority: 'batch' }]);
    // The jobs list narrows to them: the twelve that ran (the refused line made no job).
    const listed = await fetch(`${stack.baseUrl}/v1/jobs?batch=${batch.id}&limit=100`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    const { items } = (await listed.json()) as { items: { metadata: Record<string, string> }[] };
    expect(items.map((j) => j.metadata['inferq.custom_id']).sort()).toEqual(good.map((_, i) => `req-${i}`).sort());

    expect((await openai.batches.list({ limit: 100 })).data.map((b) => b.id)).toContain(batch.id);
    await expect(openai.batches.cancel(batch.id)).rejects.toMatchObject({ status: 409, code: 'BATCH_NOT_CANCELABLE' });
    await expect(openai.files.delete(batch.output_file_id!)).resolves.toMatchObject({ deleted: true });
    await expect(openai.files.retrieve(batch.output_file_id!)).rejects.toMatchObject({ status: 404, code: 'FILE_NOT_FOUND' });
  });

  it('runs /v1/embeddings lines, one job a text, answered as the embeddings endpoint answers', async () => {
    const bodies = [
      { model: 'encoder', input: ['the quick brown fox', 'hello world', 'a cat sat on the mat'] },
      { model: 'encoder', input: 'one text only', dimensions: 8 },
      { model: 'mlp', input: 'not an encoder' },
    ];
    const file = await upload(bodies.map((body, i) => JSON.stringify({ custom_id: `e-${i}`, method: 'POST', url: '/v1/embeddings', body })));
    const batch = await waitForEnd((await openai.batches.create({ input_file_id: file.id, endpoint: '/v1/embeddings', completion_window: '24h' })).id);
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: 3, completed: 2, failed: 1 } });
    const output = await jsonl(batch.output_file_id!);
    expect(output.map((o) => o.custom_id).sort()).toEqual(['e-0', 'e-1']);
    // Lines are in the order they ended: each is matched to its request by custom_id.
    for (const o of output) {
      const body = bodies[Number(o.custom_id.slice('e-'.length))]!;
      const direct = await openai.embeddings.create({ ...body, encoding_format: 'float' } as OpenAI.EmbeddingCreateParams);
      const got = o.response!.body as unknown as OpenAI.CreateEmbeddingResponse;
      expect(got).toMatchObject({ object: 'list', model: 'encoder:1', usage: direct.usage });
      expect(got.data.map((d) => d.embedding.length)).toEqual(direct.data.map((d) => d.embedding.length));
      for (const [k, d] of got.data.entries()) {
        expect(Math.max(...d.embedding.map((v, j) => Math.abs(v - direct.data[k]!.embedding[j]!)))).toBeLessThan(1e-5);
      }
    }
    expect(await jsonl(batch.error_file_id!)).toEqual([
      expect.objectContaining({
        custom_id: 'e-2',
        response: expect.objectContaining({ status_code: 400, body: { error: expect.objectContaining({ code: 'MODEL_NOT_EMBEDDING' }) } }),
      }),
    ]);
  });

  it('refuses a file with a bad line, a repeated custom_id or another endpoint, saying which line', async () => {
    const file = await upload([line('a', mlpJob(1)), 'not json', JSON.stringify({ custom_id: 'c', method: 'POST', url: '/v1/chat/completions', body: {} })]);
    const batch = await waitForEnd((await openai.batches.create({ input_file_id: file.id, endpoint: JOBS_ENDPOINT, completion_window: '24h' })).id);
    expect(batch.status).toBe('failed');
    expect(batch.errors!.data).toEqual([
      expect.objectContaining({ code: 'invalid_json_line', line: 2 }),
      expect.objectContaining({ code: 'mismatched_endpoint', line: 3, param: 'url' }),
    ]);
    const repeated = await upload([line('same', mlpJob(1)), line('same', mlpJob(2))]);
    const second = await waitForEnd((await openai.batches.create({ input_file_id: repeated.id, endpoint: JOBS_ENDPOINT, completion_window: '24h' })).id);
    expect(second).toMatchObject({ status: 'failed', errors: { data: [expect.objectContaining({ code: 'duplicate_custom_id' })] } });
  });

  it('fails a file refused late: the lines it ran first leave no queued job and no answer behind', async () => {
    // Lines run as soon as they are checked: those before the bad one may be queued when it is found (the model paused).
    expect((await stack.request('POST', '/v1/models/mlp/pause', {})).status).toBe(200);
    try {
      const good = Array.from({ length: 2_500 }, (_, i) => line(`late-${i}`, mlpJob(i)));
      const file = await upload([...good, 'not json']);
      const batch = await waitForEnd((await openai.batches.create({ input_file_id: file.id, endpoint: JOBS_ENDPOINT, completion_window: '24h' })).id);
      expect(batch).toMatchObject({ status: 'failed', output_file_id: null, error_file_id: null });
      expect(batch.errors!.data).toEqual([expect.objectContaining({ code: 'invalid_json_line', line: 2_501 })]);
      const { rows } = await stack.ctx.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM jobs WHERE metadata->>'inferq.batch_id' = $1 AND status = 'queued'",
        [batch.id],
      );
      expect(rows[0]!.n).toBe(0);
      const kept = await stack.ctx.pool.query<{ lines: number; parts: number }>(
        `SELECT (SELECT count(*)::int FROM bulk_batch_requests WHERE batch_id = $1) AS lines,
                (SELECT count(*)::int FROM bulk_batch_parts WHERE batch_id = $1) AS parts`,
        [batch.id],
      );
      expect(kept.rows[0]).toEqual({ lines: 0, parts: 0 });
    } finally {
      expect((await stack.request('POST', '/v1/models/mlp/resume', {})).status).toBe(200);
    }
  });

  it('cancels: queued jobs are canceled and the lines not run are in the error file', async () => {
    expect((await stack.request('POST', '/v1/models/mlp/pause', {})).status).toBe(200);
    try {
      const file = await upload(Array.from({ length: 20 }, (_, i) => line(`c-${i}`, mlpJob(i))));
      const created = await openai.batches.create({ input_file_id: file.id, endpoint: JOBS_ENDPOINT, completion_window: '24h' });
      await waitFor(async () => (await stack.ctx.pool.query(`SELECT 1 FROM jobs WHERE metadata->>'inferq.batch_id' = $1`, [created.id])).rowCount === 20, {
        what: 'the batch to submit its 20 jobs',
      });
      await expect(openai.files.delete(file.id)).rejects.toMatchObject({ status: 409, code: 'FILE_IN_USE' });
      expect((await openai.batches.cancel(created.id)).status).toBe('cancelling');
      const batch = await waitForEnd(created.id);
      expect(batch).toMatchObject({ status: 'cancelled', output_file_id: null, request_counts: { total: 20, completed: 0, failed: 20 } });
      const errors = await jsonl(batch.error_file_id!);
      expect(errors.map((e) => e.custom_id).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `c-${i}`).sort());
      expect(errors[0]!.error).toMatchObject({ code: 'batch_cancelled' });
    } finally {
      await stack.request('POST', '/v1/models/mlp/resume', {});
    }
  });

  it("cancels a revoked key's batches: nothing more is submitted for it, and its queued jobs are canceled", async () => {
    const key = await stack.request('POST', '/v1/keys', { name: 'batch owner', scopes: ['jobs:read', 'jobs:write'] });
    expect(key.status).toBe(201);
    const owner = new OpenAI({ baseURL: `${stack.baseUrl}/v1`, apiKey: key.json.secret as string, maxRetries: 0 });
    expect((await stack.request('POST', '/v1/models/mlp/pause', {})).status).toBe(200);
    try {
      const file = await owner.files.create({
        file: await toFile(Buffer.from(Array.from({ length: 10 }, (_, i) => line(`r-${i}`, mlpJob(i))).join('\n') + '\n'), 'revoked.jsonl'),
        purpose: 'batch',
      });
      const created = await owner.batches.create({ input_file_id: file.id, endpoint: JOBS_ENDPOINT, completion_window: '24h' });
      await waitFor(async () => (await openai.batches.retrieve(created.id)).status === 'in_progress', { what: 'the batch to start' });
      expect((await stack.request('POST', `/v1/keys/${key.json.id}/revoke`, {})).status).toBe(200);
      const batch = await waitForEnd(created.id);
      expect(batch).toMatchObject({ status: 'cancelled', output_file_id: null, request_counts: { total: 10, completed: 0 } });
      const { rows } = await stack.ctx.pool.query<{ status: string }>(`SELECT DISTINCT status FROM jobs WHERE metadata->>'inferq.batch_id' = $1`, [created.id]);
      expect(rows.map((r) => r.status)).toEqual(rows.length === 0 ? [] : ['canceled']);
      const { rows: audit } = await stack.ctx.pool.query(`SELECT details FROM audit_log WHERE action = 'key:revoked' AND resource = $1`, [
        `keys/${key.json.id}`,
      ]);
      expect(audit[0]!.details).toMatchObject({ batchesCancelled: [created.id] });
    } finally {
      await stack.request('POST', '/v1/models/mlp/resume', {});
    }
  });

  it('expires files as OpenAI does: an upload by its expires_after (else 30 days), output files by the batch; the sweep deletes them', async () => {
    const requests = [line('e-1', mlpJob(1)), line('e-2', mlpJob(2))];
    const kept = await upload(requests);
    expect(kept.expires_at).toBe(kept.created_at + 2_592_000);
    const short = await openai.files.create({
      file: await toFile(Buffer.from(requests.join('\n') + '\n'), 'short.jsonl'),
      purpose: 'batch',
      expires_after: { anchor: 'created_at', seconds: 3_600 },
    });
    expect(short.expires_at).toBe(short.created_at + 3_600);
    await expect(
      openai.files.create({ file: await toFile(Buffer.from('{}\n'), 'bad.jsonl'), purpose: 'batch', expires_after: { anchor: 'created_at', seconds: 60 } }),
    ).rejects.toMatchObject({ status: 400 });

    const created = await openai.batches.create({
      input_file_id: short.id,
      endpoint: JOBS_ENDPOINT,
      completion_window: '24h',
      output_expires_after: { anchor: 'created_at', seconds: 7_200 },
    });
    const batch = await waitForEnd(created.id);
    const output = await openai.files.retrieve(batch.output_file_id!);
    expect(output.expires_at).toBe(output.created_at + 7_200);

    // Past their time: the API's sweep (every second here) deletes the short-lived upload and the output; a file a
    // running batch reads waits for that batch to end.
    expect((await stack.request('POST', '/v1/models/mlp/pause', {})).status).toBe(200);
    try {
      const reading = await openai.batches.create({ input_file_id: kept.id, endpoint: JOBS_ENDPOINT, completion_window: '24h' });
      await waitFor(async () => (await openai.batches.retrieve(reading.id)).status === 'in_progress', { what: 'the batch to start' });
      const objectKeys = (await stack.ctx.pool.query<{ object_key: string }>('SELECT object_key FROM files WHERE id = ANY($1)', [[short.id, output.id]])).rows;
      // One statement: any sweep after it sees all three past their time.
      await stack.ctx.pool.query(`UPDATE files SET expires_at = now() - interval '1 second' WHERE id = ANY($1)`, [[short.id, output.id, kept.id]]);
      const gone = async (id: string) => (await openai.files.retrieve(id).catch((err: { status?: number }) => err)).status === 404;
      await waitFor(async () => (await gone(short.id)) && (await gone(output.id)), { what: 'the sweep to delete the expired files' });
      for (const { object_key } of objectKeys) expect(await stack.ctx.storage.headObject(object_key)).toBeUndefined();
      expect(await gone(kept.id)).toBe(false);
      await openai.batches.cancel(reading.id);
      await waitForEnd(reading.id);
      await waitFor(() => gone(kept.id), { what: 'the sweep to delete the input file once its batch ended' });
    } finally {
      await stack.request('POST', '/v1/models/mlp/resume', {});
    }
  });

  it('refuses what Postgres cannot store (a NUL in the file id or the metadata) with 400, not a 500', async () => {
    const create = (body: object) =>
      fetch(`${stack.baseUrl}/v1/batches`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ endpoint: '/v1/jobs', completion_window: '24h', ...body }),
      });
    expect((await create({ input_file_id: '\u0000' })).status).toBe(400);
    expect((await create({ input_file_id: 'file-none', metadata: { run: 'a\u0000b' } })).status).toBe(400);
    expect((await create({ input_file_id: 'file-none' })).status).toBe(404);
  });

  it('moved the inference-batch provenance: a UUID at /v1/batches/:id answers 308', async () => {
    const res = await fetch(`${stack.baseUrl}/v1/batches/0190a1b2-9d8e-7f6a-8b5c-4d3e2f1a0b9c`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      redirect: 'manual',
    });
    expect(res.status).toBe(308);
    expect(res.headers.get('location')).toBe('/v1/inference-batches/0190a1b2-9d8e-7f6a-8b5c-4d3e2f1a0b9c');
  });
});
