import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { encodeInferRequest } from '@inferq/contracts';
import { createJobsService } from '../src/services/jobs/jobs-service.ts';
import { createModelsService } from '../src/services/models/models-service.ts';
import type { UploadClaims } from '../src/services/uploads/upload-claims.ts';
import { buildTestApp, mlpInput, type TestApp } from './helpers.ts';

// POST /v1/jobs in its binary body forms (docs/api.md): framed as the binary
// data extension, and multipart with one part per input. Each must store the
// same bytes a JSON submit stores, and bind the same idempotency and cache hashes.

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
  expect((await t.registerModel('mlp')).statusCode).toBe(201);
});
afterAll(() => t.close());

const IHCL = 'inference-header-content-length';
const bytesOf = (input: { data: number[] }) => new Uint8Array(Float32Array.from(input.data).buffer);

/** A framed body as tritonclient lays it out: the JSON submit with the inputs' bytes after it. */
function framed(body: { model: string; [k: string]: unknown }, inputs: Array<{ name: string; datatype: string; shape: number[]; bytes: Uint8Array }>) {
  const encoded = encodeInferRequest({ inputs: inputs.map((i) => ({ ...i, data: i.bytes, binary: true })) }, { binaryOutputs: false });
  if (!encoded.ok) throw new Error(encoded.detail);
  const header = JSON.parse(Buffer.from(encoded.value.body.subarray(0, encoded.value.headerLength)).toString('utf8'));
  const json = Buffer.from(JSON.stringify({ ...body, inputs: header.inputs }));
  return {
    payload: Buffer.concat([json, encoded.value.body.subarray(encoded.value.headerLength)]),
    headers: { 'content-type': 'application/octet-stream', [IHCL]: String(json.byteLength) },
  };
}

type Part = { name: string; filename?: string; body: Uint8Array | string | Readable };
/** A multipart/form-data body; a Readable part makes the whole payload a stream. */
function multipart(parts: Part[]) {
  const boundary = `----inferq${Math.random().toString(16).slice(2)}`;
  const chunks: Array<Uint8Array | Readable> = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"` : ''}`;
    const type = typeof p.body === 'string' ? 'application/json' : 'application/octet-stream';
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\nContent-Type: ${type}\r\n\r\n`));
    chunks.push(typeof p.body === 'string' ? Buffer.from(p.body) : p.body);
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  const streamed = chunks.some((c) => c instanceof Readable);
  const payload = streamed
    ? Readable.from(
        (async function* () {
          for (const c of chunks)
            if (c instanceof Readable) yield* c;
            else yield c;
        })(),
      )
    : Buffer.concat(chunks as Uint8Array[]);
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

const post = (body: { payload: Buffer | Readable | object; headers?: Record<string, string> }, headers: Record<string, string> = {}) =>
  t.server.inject({ method: 'POST', url: '/v1/jobs', payload: body.payload as Buffer, headers: { ...t.auth(), ...body.headers, ...headers } });
const storedInput = async (id: string) =>
  new Uint8Array((await t.server.inject({ method: 'GET', url: `/v1/jobs/${id}/inputs/0`, headers: t.auth() })).rawPayload);
const row = async (id: string) => (await t.ctx.pool.query('SELECT inputs, request_hash FROM jobs WHERE id = $1', [id])).rows[0];

describe('framed and multipart submits', () => {
  it('store the bytes a JSON submit stores, and one Idempotency-Key answers all three forms with the same job', async () => {
    const input = mlpInput(2, 11);
    const head = { name: input.name, datatype: input.datatype, shape: input.shape };
    const json = await post({ payload: { model: 'mlp', inputs: [input] } }, { 'idempotency-key': 'forms-1' });
    expect(json.statusCode).toBe(202);
    const frame = await post(framed({ model: 'mlp' }, [{ ...head, bytes: bytesOf(input) }]), { 'idempotency-key': 'forms-1' });
    expect(frame.statusCode).toBe(202);
    expect(frame.json().id).toBe(json.json().id);
    const parts = multipart([
      { name: 'request', body: JSON.stringify({ model: 'mlp', inputs: [head] }) },
      { name: 'input:features', filename: 'x.bin', body: bytesOf(input) },
    ]);
    const multi = await post(parts, { 'idempotency-key': 'forms-1' });
    expect(multi.statusCode, multi.body).toBe(202);
    expect(multi.json().id).toBe(json.json().id);
    // Without the key: three jobs, the same stored bytes.
    const ids = [
      (await post({ payload: { model: 'mlp', inputs: [input] } })).json().id,
      (await post(framed({ model: 'mlp' }, [{ ...head, bytes: bytesOf(input) }]))).json().id,
      (
        await post(
          multipart([
            { name: 'request', body: JSON.stringify({ model: 'mlp', inputs: [head] }) },
            { name: 'input:features', body: bytesOf(input) },
          ]),
        )
      ).json().id,
    ];
    for (const id of ids) expect(await storedInput(id)).toEqual(bytesOf(input));
    // A different tensor under the same key is a conflict, whatever the form.
    const other = await post(framed({ model: 'mlp' }, [{ ...head, bytes: bytesOf(mlpInput(2, 12)) }]), { 'idempotency-key': 'forms-1' });
    expect(other.json().code).toBe('IDEMPOTENCY_CONFLICT');
  });

  it('mixes JSON data with framed inputs, and answers the same job body a JSON submit gets', async () => {
    const res = await post(framed({ model: 'mlp', priority: 'high', metadata: { form: 'framed' } }, [{ ...mlpInput(1, 2), bytes: bytesOf(mlpInput(1, 2)) }]));
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ status: 'queued', links: { self: `/v1/jobs/${res.json().id}` } });
    const job = await t.server.inject({ method: 'GET', url: `/v1/jobs/${res.json().id}`, headers: t.auth() });
    expect(job.json()).toMatchObject({ priority: 'high', metadata: { form: 'framed' } });
  });

  it('streams a multipart part over the inline limit to S3 through putTensorStream', async () => {
    const spy = vi.spyOn(t.tensors, 'putTensorStream');
    const rows = 200; // 51 200 bytes: over the 16 KiB inline limit
    const input = mlpInput(rows, 4);
    const res = await post(
      multipart([
        { name: 'request', body: JSON.stringify({ model: 'mlp', inputs: [{ name: 'features', datatype: 'FP32', shape: [rows, 64] }] }) },
        { name: 'input:features', filename: 'features.bin', body: Readable.from([Buffer.from(bytesOf(input))]) },
      ]),
    );
    expect(res.statusCode).toBe(202);
    expect(spy).toHaveBeenCalledTimes(1);
    spy.mockRestore();
    const { inputs } = await row(res.json().id);
    expect(inputs[0]).toMatchObject({ name: 'features', bytes: rows * 256, key: expect.any(String) });
    expect(inputs[0].b64).toBeUndefined();
    expect(await storedInput(res.json().id)).toEqual(bytesOf(input));
  });

  it('checks the model, the signature, the deadline and the webhook before a part is stored', async () => {
    const spy = vi.spyOn(t.tensors, 'putTensorStream');
    const big = (request: object) =>
      post(
        multipart([
          { name: 'request', body: JSON.stringify(request) },
          { name: 'input:features', filename: 'f.bin', body: Readable.from([Buffer.alloc(200 * 256)]) },
        ]),
      );
    const features = { name: 'features', datatype: 'FP32', shape: [200, 64] };
    const cases: Array<[object, string]> = [
      [{ model: 'absent', inputs: [features] }, 'MODEL_NOT_FOUND'],
      [{ model: 'mlp', inputs: [{ ...features, name: 'pixels' }] }, 'INPUT_UNKNOWN'],
      [{ model: 'mlp', inputs: [{ ...features, datatype: 'INT32' }] }, 'INPUT_DATATYPE_MISMATCH'],
      [{ model: 'mlp', inputs: [{ ...features, shape: [200, 63] }] }, 'INPUT_SHAPE_MISMATCH'],
      [{ model: 'mlp', inputs: [features], deadline: 'tomorrow' }, 'VALIDATION_FAILED'],
    ];
    for (const [request, code] of cases) {
      const res = await big(request);
      expect(res.statusCode, code).toBeGreaterThanOrEqual(400);
      expect(res.json().code, JSON.stringify(request)).toBe(code);
    }
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
  });

  it('refuses missing, extra, duplicate and wrongly sized parts, and bad framing, with 400 problem+json', async () => {
    const head = { name: 'features', datatype: 'FP32', shape: [1, 64] };
    const request = { name: 'request', body: JSON.stringify({ model: 'mlp', inputs: [head] }) };
    const bytes = bytesOf(mlpInput(1, 1));
    const cases: Array<[Part[], string]> = [
      [[request], 'INPUT_MISSING'],
      [[request, { name: 'input:features', body: bytes }, { name: 'input:features', body: bytes }], 'INPUT_DUPLICATE'],
      [[request, { name: 'input:other', body: bytes }], 'INPUT_UNKNOWN'],
      [[request, { name: 'input:features', body: bytes.subarray(4) }], 'BINARY_SIZE_MISMATCH'],
      [[request, { name: 'input:features', body: Buffer.concat([bytes, bytes]) }], 'BINARY_SIZE_MISMATCH'],
      [[{ name: 'input:features', body: bytes }, request], 'VALIDATION_FAILED'],
      [[{ name: 'request', body: '{"model": "mlp", "inputs": [' }], 'MALFORMED_BODY'],
      [
        [
          { name: 'request', body: JSON.stringify({ model: 'mlp', inputs: [{ ...head, data: Array.from(mlpInput().data) }] }) },
          { name: 'input:features', body: bytes },
        ],
        'INPUT_UNKNOWN',
      ],
    ];
    for (const [parts, code] of cases) {
      const res = await post(multipart(parts));
      expect(res.statusCode, code).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json().code).toBe(code);
    }
    // A body cut short inside a part (no closing boundary): the part's stream ends in an error, never hangs.
    const whole = multipart([request, { name: 'input:features', body: bytes }]);
    const wholeBytes = whole.payload as Buffer;
    for (const cut of [wholeBytes.byteLength - 30, wholeBytes.byteLength - 100, wholeBytes.byteLength - 300]) {
      const res = await post({ payload: wholeBytes.subarray(0, cut), headers: whole.headers });
      expect(res.statusCode, String(cut)).toBe(400);
    }
    const good = framed({ model: 'mlp' }, [{ ...head, bytes }]);
    const short = await post({ payload: good.payload.subarray(0, good.payload.byteLength - 1), headers: good.headers });
    expect(short.json().code).toBe('BINARY_SIZE_MISMATCH');
    const past = await post({ payload: good.payload, headers: { ...good.headers, [IHCL]: String(good.payload.byteLength + 1) } });
    expect(past.json().code).toBe('BINARY_HEADER_LENGTH_INVALID');
    const both = await post({ payload: { model: 'mlp', inputs: [{ ...mlpInput(), parameters: { binary_data_size: 256 } }] } });
    expect(both.json().code).toBe('BINARY_DATA_CONFLICT');
    const none = await post({ payload: { model: 'mlp', inputs: [head] } });
    expect(none.json()).toMatchObject({ status: 400, code: 'INPUT_DATA_INVALID' });
    const upload = await post({ payload: { model: 'mlp', inputs: [{ ...head, upload: '0190a0b0-0000-7000-8000-000000000000' }] } });
    expect(upload.json()).toMatchObject({ status: 400, code: 'UPLOAD_NOT_FOUND' });
    const tooLarge = await post(multipart([{ name: 'request', body: JSON.stringify({ model: 'mlp', inputs: [{ ...head, shape: [100_000, 64] }] }) }]));
    expect(tooLarge.statusCode).toBe(413);
  });
});

describe('a multipart part far over the inline limit', () => {
  let big: TestApp;
  beforeAll(async () => {
    big = await buildTestApp({ inputMaxBytes: 80 * 1024 * 1024 });
    expect((await big.registerModel('mlp')).statusCode).toBe(201);
  });
  afterAll(() => big.close());

  /** `bytes` bytes of a repeating pattern, made as they are read: the test holds no copy either. */
  const pattern = (bytes: number) =>
    Readable.from(
      (function* () {
        const chunk = Buffer.alloc(1024 * 1024, 7);
        for (let left = bytes; left > 0; left -= chunk.byteLength) yield left >= chunk.byteLength ? chunk : chunk.subarray(0, left);
      })(),
    );
  const submit64 = (rows: number, partBytes: number) => {
    const body = multipart([
      { name: 'request', body: JSON.stringify({ model: 'mlp', inputs: [{ name: 'features', datatype: 'FP32', shape: [rows, 64] }] }) },
      { name: 'input:features', filename: 'big.bin', body: pattern(partBytes) },
    ]);
    return big.server.inject({ method: 'POST', url: '/v1/jobs', payload: body.payload as unknown as Buffer, headers: { ...big.auth(), ...body.headers } });
  };

  it('streams 64 MiB to S3 without holding it in the heap', async () => {
    const bytes = 64 * 1024 * 1024;
    global.gc?.();
    const base = process.memoryUsage().arrayBuffers;
    let peak = base;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers)), 2);
    const res = await submit64(bytes / 256, bytes);
    clearInterval(sampler);
    expect(res.statusCode, res.body).toBe(202);
    const { inputs } = (await big.ctx.pool.query('SELECT inputs FROM jobs WHERE id = $1', [res.json().id])).rows[0];
    expect(inputs[0]).toMatchObject({ bytes, key: expect.any(String) });
    // The part never sits whole in the API's memory: far below its 64 MiB.
    expect(peak - base).toBeLessThan(bytes / 4);
  });

  it('fails a streamed part of the wrong size with 400 BINARY_SIZE_MISMATCH', async () => {
    const res = await submit64(1024, 1024 * 256 - 100);
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('BINARY_SIZE_MISMATCH');
    const over = await submit64(1024, 1024 * 256 + 100);
    expect(over.json().code).toBe('BINARY_SIZE_MISMATCH');
  });
});

describe('upload inputs', () => {
  it('are claimed into the job slot through UploadClaims, and an Idempotency-Key binds the upload id', async () => {
    const features = bytesOf(mlpInput(1, 8));
    const claims: UploadClaims & { calls: unknown[][] } = {
      calls: [],
      async claim(...args) {
        claims.calls.push(args);
        return { ...args[4], bytes: args[5], b64: Buffer.from(features).toString('base64') };
      },
      settle: async () => {},
    };
    const jobs = createJobsService({
      pool: t.ctx.pool,
      producer: t.producer,
      tensors: t.tensors,
      models: createModelsService({ pool: t.ctx.pool, storage: t.ctx.storage, cacheTtlMs: 1_000 }),
      limits: { inputMaxBytes: 1024 * 1024, submitGroupMax: 16, queueMaxDepth: 0 },
      webhookAllowPrivate: true,
      uploads: claims,
    });
    const me = (await t.server.inject({ method: 'GET', url: '/v1/me', headers: t.auth() })).json();
    const principal = { keyId: me.keyId, scopes: ['admin' as const], isAdmin: true, rateLimitPerMin: null, weight: 1 };
    const submission = {
      principal,
      model: 'mlp',
      inputs: [{ name: 'features', datatype: 'FP32', shape: [1, 64], upload: 'up-1' }],
      priority: 'normal' as const,
      metadata: {},
      idempotencyKey: 'upload-key-1',
    };
    const accepted = await jobs.submitJob(submission);
    expect(claims.calls).toEqual([
      [principal, 'up-1', { jobId: accepted.id, createdAt: expect.any(Date), kind: 'inputs' }, 0, { name: 'features', datatype: 'FP32', shape: [1, 64] }, 256],
    ]);
    expect(await storedInput(accepted.id)).toEqual(features);
    // A replay names the same upload: the same job, claimed once.
    expect((await jobs.submitJob(submission)).id).toBe(accepted.id);
    expect(claims.calls).toHaveLength(1);
    await expect(jobs.submitJob({ ...submission, inputs: [{ ...submission.inputs[0]!, upload: 'up-2' }] })).rejects.toMatchObject({
      code: 'IDEMPOTENCY_CONFLICT',
    });
  });
});
