import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, mlpRows, startStack, waitFor, type Stack } from '@inferq/test-utils';
import { encodeInferRequest, parseInferResponseBody, type EncodeRequestOptions, type RequestInput, type RequestedOutput } from '@inferq/contracts';

// The Open Inference Protocol (KServe v2) surface driven the way Triton's and
// KServe's HTTP clients drive it, over the real API and worker processes.
// Bodies follow the protocol's own examples, adapted to the demo MLP.

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ apiEnv: { WAIT_MAX_S: '30' } });
  await stack.registerModel('mlp');
});
afterAll(() => stack?.close());

const v2 = (method: string, path: string, body?: unknown) => stack.request(method, path, body);
/** The protocol's example request: `{ id, inputs: [{ name, shape, datatype, data }], outputs: [{ name }] }`. */
const inferBody = (rows: number, seed: number, extra: Record<string, unknown> = {}) => ({
  id: '42',
  inputs: [{ name: 'features', shape: [rows, 64], datatype: 'FP32', data: Array.from(mlpRows(rows, seed)) }],
  ...extra,
});
/** The same input through /v1/jobs with Prefer: wait, read back as flat floats. */
async function v1Logits(rows: number, seed: number): Promise<number[]> {
  const res = await stack.request('POST', '/v1/jobs', { model: 'mlp', inputs: inferBody(rows, seed).inputs }, { prefer: 'wait=30' });
  expect(res.status).toBe(200);
  const out = res.json.outputs[0];
  if (out.data) return out.data;
  const raw = await fetch(`${stack.baseUrl}/v1/jobs/${res.json.id}/outputs/0`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  return Array.from(new Float32Array(await raw.arrayBuffer()));
}

describe('health and metadata', () => {
  it('answers live and ready without a key, and the server metadata with one', async () => {
    for (const path of ['/v2/health/live', '/v2/health/ready']) {
      const res = await fetch(`${stack.baseUrl}${path}`);
      expect(res.status, path).toBe(200);
    }
    expect((await fetch(`${stack.baseUrl}/v2`)).status).toBe(401);
    expect(await v2('GET', '/v2')).toEqual({ status: 200, json: { name: 'inferq', version: expect.any(String), extensions: ['binary_tensor_data'] } });
  });

  it('describes the model with dynamic dims as -1, latest and by version', async () => {
    const expected = {
      name: 'mlp',
      versions: ['1'],
      platform: 'onnxruntime_onnx',
      inputs: [{ name: 'features', datatype: 'FP32', shape: [-1, 64] }],
      outputs: [{ name: 'logits', datatype: 'FP32', shape: [-1, 16] }],
    };
    expect(await v2('GET', '/v2/models/mlp')).toEqual({ status: 200, json: expected });
    expect(await v2('GET', '/v2/models/mlp/versions/1')).toEqual({ status: 200, json: expected });
  });

  it('answers an unknown model or version with 404 and the protocol `error` member', async () => {
    for (const path of ['/v2/models/nope', '/v2/models/mlp/versions/7', '/v2/models/nope/ready', '/v2/models/nope/infer']) {
      const res = await v2(path.endsWith('infer') ? 'POST' : 'GET', path, path.endsWith('infer') ? inferBody(1, 1) : undefined);
      expect(res.status, path).toBe(404);
      expect(res.json).toMatchObject({ code: 'MODEL_NOT_FOUND', error: expect.stringContaining('not registered') });
    }
  });
});

describe('before a worker serves the model', () => {
  it('is not ready, and infer answers 503 MODEL_UNAVAILABLE without submitting', async () => {
    for (const path of ['/v2/models/mlp/ready', '/v2/models/mlp/versions/1/ready']) {
      const res = await v2('GET', path);
      expect(res.status, path).toBe(503);
      expect(res.json).toMatchObject({ code: 'MODEL_UNAVAILABLE', error: expect.stringContaining('no live worker') });
    }
    const res = await v2('POST', '/v2/models/mlp/infer', inferBody(1, 1));
    expect(res.status).toBe(503);
    expect(res.json).toMatchObject({ code: 'MODEL_UNAVAILABLE', error: expect.any(String) });
    expect((await stack.ctx.pool.query('SELECT count(*)::int AS n FROM jobs')).rows[0].n).toBe(0);
  });

  it('refuses an invalid tensor with 400 and `error`, worker or not', async () => {
    const wrongShape = await v2('POST', '/v2/models/mlp/infer', {
      inputs: [{ name: 'features', shape: [1, 63], datatype: 'FP32', data: new Array(63).fill(0) }],
    });
    expect(wrongShape.status).toBe(400);
    expect(wrongShape.json).toMatchObject({ code: 'INPUT_SHAPE_MISMATCH', error: expect.stringContaining('features') });
    const bytes = await v2('POST', '/v2/models/mlp/infer', { inputs: [{ name: 'features', shape: [1, 64], datatype: 'BYTES', data: ['x'] }] });
    expect(bytes.json).toMatchObject({ status: 400, code: 'INPUT_DATATYPE_MISMATCH', error: expect.any(String) });
    const bf16 = await v2('POST', '/v2/models/mlp/infer', { inputs: [{ name: 'features', shape: [1, 64], datatype: 'BF16', data: ['x'] }] });
    expect(bf16.json).toMatchObject({ status: 400, code: 'DATATYPE_UNSUPPORTED', error: expect.any(String) });
    const unknownField = await v2('POST', '/v2/models/mlp/infer', { ...inferBody(1, 1), model: 'mlp' });
    expect(unknownField.json).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', error: expect.stringContaining('model') });
    const unknownOutput = await v2('POST', '/v2/models/mlp/infer', inferBody(1, 1, { outputs: [{ name: 'probabilities' }] }));
    expect(unknownOutput.json).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', error: expect.stringContaining('probabilities') });
  });
});

describe('with a worker', () => {
  beforeAll(async () => {
    // 100 bytes inline: one row of logits (64 bytes) is stored inline, two rows (128) go to S3.
    await stack.startWorker({ INLINE_TENSOR_MAX_BYTES: '100' });
    await waitFor(async () => (await v2('GET', '/v2/models/mlp/ready')).status === 200, { intervalMs: 100, what: 'mlp to be ready' });
  });

  it('is ready, by name and by version', async () => {
    expect(await v2('GET', '/v2/models/mlp/ready')).toEqual({ status: 200, json: { ready: true } });
    expect(await v2('GET', '/v2/models/mlp/versions/1/ready')).toEqual({ status: 200, json: { ready: true } });
  });

  it('infers like the protocol example, with the same outputs /v1/jobs gives', async () => {
    const res = await v2('POST', '/v2/models/mlp/infer', inferBody(1, 5));
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ model_name: 'mlp', model_version: '1', id: '42' });
    expect(res.json.outputs).toHaveLength(1);
    const [out] = res.json.outputs;
    expect(out).toMatchObject({ name: 'logits', datatype: 'FP32', shape: [1, 16] });
    expect(out.data).toHaveLength(16);
    const expected = await v1Logits(1, 5);
    out.data.forEach((v: number, i: number) => expect(v).toBeCloseTo(expected[i]!, 5));
  });

  it('serves the version path, priority, the outputs filter, and outputs kept in S3', async () => {
    const body = inferBody(2, 6, {
      id: undefined,
      parameters: { priority: 'high', sequence_id: 1 },
      outputs: [{ name: 'logits', parameters: { binary_data: false } }],
    });
    const res = await v2('POST', '/v2/models/mlp/versions/1/infer', body);
    expect(res.status).toBe(200);
    // No request id: the job id, which /v1 knows.
    const job = await v2('GET', `/v1/jobs/${res.json.id}`);
    expect(job.json).toMatchObject({ model: 'mlp', modelVersion: 1, priority: 'high', status: 'succeeded' });
    expect(job.json.outputs[0].url).toEqual(expect.any(String));
    const [out] = res.json.outputs;
    expect(out).toMatchObject({ name: 'logits', datatype: 'FP32', shape: [2, 16] });
    const expected = await v1Logits(2, 6);
    expect(out.data).toHaveLength(32);
    out.data.forEach((v: number, i: number) => expect(v).toBeCloseTo(expected[i]!, 5));
    // Nested data is accepted, as the protocol allows.
    const nested = await v2('POST', '/v2/models/mlp/infer', {
      inputs: [{ name: 'features', shape: [1, 64], datatype: 'FP32', data: [Array.from(mlpRows(1, 5))] }],
    });
    expect(nested.status).toBe(200);
    expect(nested.json.outputs[0].data).toEqual((await v2('POST', '/v2/models/mlp/infer', inferBody(1, 5))).json.outputs[0].data);
  });

  it('answers bad input data found at decode time with 400 and `error`', async () => {
    const res = await v2('POST', '/v2/models/mlp/infer', {
      inputs: [{ name: 'features', shape: [1, 64], datatype: 'FP32', data: ['a', ...new Array(63).fill(0)] }],
    });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: 'INPUT_DATA_INVALID', error: expect.stringContaining('FP32') });
  });
});

describe('the binary tensor data extension', () => {
  const IHCL = 'inference-header-content-length';
  const features = (rows: number, seed: number): RequestInput => ({
    name: 'features',
    datatype: 'FP32',
    shape: [rows, 64],
    data: new Uint8Array(mlpRows(rows, seed).buffer.slice(0)),
  });
  /** POSTs a body as tritonclient frames it (`encodeInferRequest`), with `contentType` (null: none, as the Python client sends). */
  async function infer(
    request: { id?: string; parameters?: Record<string, unknown>; inputs: RequestInput[]; outputs?: RequestedOutput[] },
    options: EncodeRequestOptions = {},
    contentType: string | null = 'application/octet-stream',
  ) {
    const framed = encodeInferRequest(request, options);
    if (!framed.ok) throw new Error(framed.detail);
    const headers: Record<string, string> = { authorization: `Bearer ${ADMIN_KEY}` };
    if (framed.value.headerLength !== undefined) headers[IHCL] = String(framed.value.headerLength);
    if (contentType) headers['content-type'] = framed.value.headerLength === undefined ? 'application/json' : contentType;
    const res = await fetch(`${stack.baseUrl}/v2/models/mlp/infer`, { method: 'POST', headers, body: Buffer.from(framed.value.body) });
    return { res, body: new Uint8Array(await res.arrayBuffer()) };
  }
  const logitsOf = (bytes: Uint8Array) => Array.from(new Float32Array(bytes.slice().buffer));

  beforeAll(async () => {
    await waitFor(async () => (await v2('GET', '/v2/models/mlp/ready')).status === 200, { intervalMs: 100, what: 'mlp to be ready' });
  });

  it('takes binary inputs and answers binary outputs laid out as the protocol says, equal to /v1', async () => {
    for (const contentType of ['application/octet-stream', null]) {
      const { res, body } = await infer({ id: 'bin-1', inputs: [features(2, 9)] }, { binaryOutputs: true }, contentType);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/octet-stream');
      const headerLength = Number(res.headers.get(IHCL));
      // The JSON header, then exactly the one output's 2 × 16 FP32 bytes.
      expect(body.byteLength).toBe(headerLength + 2 * 16 * 4);
      expect(JSON.parse(Buffer.from(body.subarray(0, headerLength)).toString('utf8'))).toEqual({
        model_name: 'mlp',
        model_version: '1',
        id: 'bin-1',
        outputs: [{ name: 'logits', datatype: 'FP32', shape: [2, 16], parameters: { binary_data_size: 128 } }],
      });
      const parsed = parseInferResponseBody(body, headerLength);
      if (!parsed.ok) throw new Error(parsed.detail);
      const expected = await v1Logits(2, 9);
      logitsOf(parsed.value.tensors[0]!).forEach((v, i) => expect(v).toBeCloseTo(expected[i]!, 5));
    }
  });

  it("takes a header shaped like the extension document's example: top-level model_name and model_version, ignored", async () => {
    const data = new Uint8Array(mlpRows(1, 5).buffer.slice(0));
    const header = Buffer.from(
      JSON.stringify({
        model_name: 'mlp',
        model_version: '1',
        inputs: [{ name: 'features', shape: [1, 64], datatype: 'FP32', parameters: { binary_data_size: data.byteLength } }],
        outputs: [{ name: 'logits', parameters: { binary_data: true } }],
      }),
    );
    const res = await fetch(`${stack.baseUrl}/v2/models/mlp/infer`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/octet-stream', [IHCL]: String(header.byteLength) },
      body: Buffer.concat([header, data]),
    });
    const body = new Uint8Array(await res.arrayBuffer());
    expect(res.status).toBe(200);
    const parsed = parseInferResponseBody(body, Number(res.headers.get(IHCL)));
    if (!parsed.ok) throw new Error(parsed.detail);
    const expected = await v1Logits(1, 5);
    logitsOf(parsed.value.tensors[0]!).forEach((v, i) => expect(v).toBeCloseTo(expected[i]!, 5));
  });

  it('mixes binary inputs with JSON outputs, takes integer priorities, and the C++ client all-JSON form', async () => {
    const { res, body } = await infer({ inputs: [features(1, 3)], outputs: [{ name: 'logits', binary: false }], parameters: { priority: 1 } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get(IHCL)).toBeNull();
    const json = JSON.parse(Buffer.from(body).toString('utf8'));
    const expected = await v1Logits(1, 3);
    json.outputs[0].data.forEach((v: number, i: number) => expect(v).toBeCloseTo(expected[i]!, 5));
    expect((await v2('GET', `/v1/jobs/${json.id}`)).json).toMatchObject({ priority: 'high' });
    // All JSON with the header length set to the whole body, binary outputs asked for.
    const text = Buffer.from(JSON.stringify({ ...inferBody(1, 3), parameters: { binary_data_output: true } }));
    const all = await fetch(`${stack.baseUrl}/v2/models/mlp/infer`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json', [IHCL]: String(text.byteLength) },
      body: text,
    });
    expect(all.status).toBe(200);
    const allBody = new Uint8Array(await all.arrayBuffer());
    const parsed = parseInferResponseBody(allBody, Number(all.headers.get(IHCL)));
    if (!parsed.ok) throw new Error(parsed.detail);
    expect(logitsOf(parsed.value.tensors[0]!)).toEqual(json.outputs[0].data.map((v: number) => Math.fround(v)));
    const bad = await v2('POST', '/v2/models/mlp/infer', { ...inferBody(1, 3), parameters: { priority: 7 } });
    expect(bad.status).toBe(400);
  });

  it('answers a framed /v1 submit with Prefer: wait and Accept: application/octet-stream with the framed job', async () => {
    const input = features(1, 4);
    const header = Buffer.from(
      JSON.stringify({ model: 'mlp', inputs: [{ name: 'features', datatype: 'FP32', shape: [1, 64], parameters: { binary_data_size: 256 } }] }),
    );
    const res = await fetch(`${stack.baseUrl}/v1/jobs`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${ADMIN_KEY}`,
        'content-type': 'application/octet-stream',
        [IHCL]: String(header.byteLength),
        prefer: 'wait=30',
        accept: 'application/octet-stream',
      },
      body: Buffer.concat([header, input.data as Uint8Array]),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    const body = new Uint8Array(await res.arrayBuffer());
    const n = Number(res.headers.get(IHCL));
    const job = JSON.parse(Buffer.from(body.subarray(0, n)).toString('utf8'));
    expect(job).toMatchObject({ status: 'succeeded', outputs: [{ name: 'logits', parameters: { binary_data_size: 64 } }] });
    const expected = await v1Logits(1, 4);
    logitsOf(body.subarray(n)).forEach((v, i) => expect(v).toBeCloseTo(expected[i]!, 5));
  });

  it('refuses bad framing with 400 and the protocol `error`, submitting nothing', async () => {
    const before = (await stack.ctx.pool.query('SELECT count(*)::int AS n FROM jobs')).rows[0].n;
    const framed = encodeInferRequest({ inputs: [features(1, 1)] });
    if (!framed.ok) throw new Error(framed.detail);
    const { body, headerLength } = framed.value;
    const send = (payload: Uint8Array, length: string) =>
      fetch(`${stack.baseUrl}/v2/models/mlp/infer`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/octet-stream', [IHCL]: length },
        body: Buffer.from(payload),
      });
    const cases: Array<[Uint8Array, string, string]> = [
      [body.subarray(0, body.byteLength - 4), String(headerLength), 'BINARY_SIZE_MISMATCH'],
      [body, String(body.byteLength + 1), 'BINARY_HEADER_LENGTH_INVALID'],
      [body, String(headerLength! - 3), 'MALFORMED_BODY'],
      [body, 'x', 'BINARY_HEADER_LENGTH_INVALID'],
    ];
    for (const [payload, length, code] of cases) {
      const res = await send(payload, length);
      expect(res.status, code).toBe(400);
      expect(await res.json()).toMatchObject({ code, error: expect.any(String) });
    }
    // binary_data_size in a plain JSON body: no binary section to read it from.
    const header = JSON.parse(Buffer.from(body.subarray(0, headerLength)).toString('utf8'));
    const plain = await v2('POST', '/v2/models/mlp/infer', header);
    expect(plain.json).toMatchObject({ status: 400, code: 'BINARY_SIZE_MISMATCH' });
    expect((await stack.ctx.pool.query('SELECT count(*)::int AS n FROM jobs')).rows[0].n).toBe(before);
  });
});
