import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Tokenizer } from '@huggingface/tokenizers';
import { buildDemoTokenizer } from '@inferq/onnx-model';
import { ADMIN_KEY, demoModel, startStack, type Stack } from '@inferq/test-utils';

// POST /v1/embeddings end to end: the generated transformer encoder with the
// generated WordPiece tokenizer, a real worker, and OpenAI's own client.

const TEXTS = ['The quick brown fox jumps over the lazy dog.', 'Hello, world!', 'A cat sat on the mat', 'inference queue', 'Zebra-crossing 42'];

let stack: Stack;
let openai: OpenAI;
beforeAll(async () => {
  stack = await startStack();
  const tokenizer = demoModel('transformer').tokenizerPath!;
  // Mean pooling of last_hidden_state here, against the model's own masked mean (`pooled`) read as is.
  await stack.registerModel('encoder', { normalize: 'false', maxBatchDelayMs: '50' }, 'transformer', tokenizer);
  await stack.registerModel('encoder-pooled', { embeddingOutput: 'pooled', normalize: 'false' }, 'transformer', tokenizer);
  await stack.registerModel('encoder-unit', {}, 'transformer', tokenizer);
  await stack.registerModel('mlp');
  await stack.startWorker();
  openai = new OpenAI({ baseURL: `${stack.baseUrl}/v1`, apiKey: ADMIN_KEY, maxRetries: 0 });
});
afterAll(() => stack?.close());

const embed = (body: object, headers: Record<string, string> = {}) => stack.request('POST', '/v1/embeddings', body, headers);
const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

describe('POST /v1/embeddings', () => {
  it('registers an encoder with its tokenizer and shows the settings', async () => {
    const model = (await stack.request('GET', '/v1/models/encoder')).json;
    expect(model.embedding).toEqual({
      pooling: 'mean',
      normalize: false,
      output: 'last_hidden_state',
      maxTokens: 128,
      tokenizerSha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect((await stack.request('GET', '/v1/models/encoder-pooled')).json.embedding).toMatchObject({ pooling: 'none', output: 'pooled' });
    expect((await stack.request('GET', '/v1/models/mlp')).json).not.toHaveProperty('embedding');
  });

  it("answers in OpenAI's shape; mean pooling over the padded jobs equals the model's own masked mean", async () => {
    const res = await embed({ model: 'encoder', input: TEXTS });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const tokenizer = new Tokenizer(buildDemoTokenizer(), {});
    const tokens = TEXTS.reduce((n, t) => n + tokenizer.encode(t).ids.length, 0);
    expect(res.json).toMatchObject({ object: 'list', model: 'encoder:1', usage: { prompt_tokens: tokens, total_tokens: tokens } });
    expect(res.json.data.map((d: { object: string; index: number }) => [d.object, d.index])).toEqual(TEXTS.map((_, i) => ['embedding', i]));
    expect(res.json.data.every((d: { embedding: number[] }) => d.embedding.length === 64)).toBe(true);

    const reference = (await embed({ model: 'encoder-pooled', input: TEXTS })).json;
    for (const [i, d] of (res.json.data as Array<{ embedding: number[] }>).entries()) {
      const want: number[] = reference.data[i].embedding;
      expect(Math.max(...d.embedding.map((v, k) => Math.abs(v - want[k]!))), `text ${i}`).toBeLessThan(1e-4);
    }
    // Different texts, different vectors.
    expect(res.json.data[0].embedding).not.toEqual(res.json.data[1].embedding);
  });

  it('runs each text as one job, batched with the others', async () => {
    // 9 to 11 tokens each: all padded to 16, so they can share batches.
    const texts = Array.from({ length: 16 }, (_, i) => `query number ${i + 10} about vector search`);
    const {
      rows: [before],
    } = await stack.ctx.pool.query<{ at: Date }>('SELECT now() AS at');
    const res = await embed({ model: 'encoder', input: texts });
    expect(res.status).toBe(200);
    const { rows } = await stack.ctx.pool.query<{ n: number; shapes: string[]; batches: number; biggest: number }>(
      `SELECT count(*)::int AS n, array_agg(DISTINCT inputs->0->>'shape') AS shapes, count(DISTINCT batch_id)::int AS batches, max(batch_size)::int AS biggest
         FROM jobs WHERE model_name = 'encoder' AND created_at >= $1`,
      [before!.at],
    );
    console.log(`16 texts: ${rows[0]!.n} jobs in ${rows[0]!.batches} batches, largest ${rows[0]!.biggest}`);
    expect(rows[0]).toMatchObject({ n: 16, shapes: ['[1, 16]'] });
    expect(rows[0]!.biggest).toBeGreaterThan(1);
  });

  it('works with the OpenAI client as it is: base64 (its default), floats, token ids, dimensions', async () => {
    const viaClient = await openai.embeddings.create({ model: 'encoder-unit', input: ['Hello, world!', 'inference queue'] });
    expect(viaClient.data).toHaveLength(2);
    expect(viaClient.model).toBe('encoder-unit:1');
    for (const d of viaClient.data) expect(norm(d.embedding)).toBeCloseTo(1, 5);

    const floats = await openai.embeddings.create({ model: 'encoder-unit', input: 'Hello, world!', encoding_format: 'float' });
    expect(floats.data[0]!.embedding.map((v) => Math.fround(v))).toEqual(viaClient.data[0]!.embedding.map((v) => Math.fround(v)));

    const ids = new Tokenizer(buildDemoTokenizer(), {}).encode('Hello, world!').ids;
    const fromIds = await openai.embeddings.create({ model: 'encoder-unit', input: [ids], encoding_format: 'float' });
    expect(fromIds.data[0]!.embedding).toEqual(floats.data[0]!.embedding);
    expect(fromIds.usage.prompt_tokens).toBe(ids.length);

    const short = await openai.embeddings.create({ model: 'encoder-unit', input: 'Hello, world!', encoding_format: 'float', dimensions: 16 });
    expect(short.data[0]!.embedding).toHaveLength(16);
    expect(norm(short.data[0]!.embedding)).toBeCloseTo(1, 5);
  });

  it('refuses what it cannot embed with a problem that OpenAI clients read too', async () => {
    const notEncoder = await embed({ model: 'mlp', input: 'hello' });
    expect(notEncoder.status).toBe(400);
    expect(notEncoder.json).toMatchObject({
      code: 'MODEL_NOT_EMBEDDING',
      error: { type: 'invalid_request_error', code: 'MODEL_NOT_EMBEDDING', message: expect.stringContaining('tokenizer') },
    });
    const tooLong = await embed({ model: 'encoder', input: ['ok', 'word '.repeat(200)] });
    expect(tooLong.status).toBe(400);
    expect(tooLong.json).toMatchObject({ code: 'INPUT_TOO_LONG', errors: [{ pointer: '/body/input/1' }] });
    expect((await embed({ model: 'encoder', input: [[2, 5000, 3]] })).json.code).toBe('VALIDATION_FAILED');
    expect((await embed({ model: 'encoder', input: 'x', dimensions: 65 })).json.code).toBe('VALIDATION_FAILED');
    expect((await embed({ model: 'encoder', input: [] })).status).toBe(400);
    expect((await embed({ model: 'nope', input: 'x' })).status).toBe(404);
    await expect(openai.embeddings.create({ model: 'mlp', input: 'hello' })).rejects.toMatchObject({ status: 400, code: 'MODEL_NOT_EMBEDDING' });
  });

  it('refuses, at upload, a tokenizer for a model that is not an encoder, and a file that is not a tokenizer', async () => {
    const upload = async (file: string, tokenizer: Uint8Array<ArrayBuffer>, fields: Record<string, string> = {}) => {
      const form = new FormData();
      form.set('name', 'bad-encoder');
      for (const [k, v] of Object.entries(fields)) form.set(k, v);
      form.set('tokenizer', new Blob([tokenizer]), 'tokenizer.json');
      form.set('file', new Blob([await (await import('node:fs/promises')).readFile(demoModel(file).path)]), 'm.onnx');
      const res = await fetch(`${stack.baseUrl}/v1/models`, { method: 'POST', body: form, headers: { authorization: `Bearer ${ADMIN_KEY}` } });
      return { status: res.status, json: await res.json() };
    };
    const tokenizer = new TextEncoder().encode(JSON.stringify(buildDemoTokenizer()));
    expect(await upload('mlp', tokenizer)).toMatchObject({ status: 422, json: { code: 'MODEL_UNSUPPORTED' } });
    expect(await upload('transformer', new TextEncoder().encode('{"not": "a tokenizer"}'))).toMatchObject({
      status: 400,
      json: { errors: [{ pointer: '/body/tokenizer' }] },
    });
    expect(await upload('transformer', tokenizer, { pooling: 'none' })).toMatchObject({ status: 422, json: { errors: [{ pointer: '/body/pooling' }] } });
    const stray = await stack.request('GET', '/v1/models/bad-encoder');
    expect(stray.status).toBe(404);
  });
});
