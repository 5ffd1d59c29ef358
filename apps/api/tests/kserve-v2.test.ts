import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, mlpRows, startStack, waitFor, type Stack } from '@inferq/test-utils';

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
    expect(await v2('GET', '/v2')).toEqual({ status: 200, json: { name: 'inferq', version: expect.any(String), extensions: [] } });
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
    expect(bytes.json).toMatchObject({ status: 400, code: 'DATATYPE_UNSUPPORTED', error: expect.any(String) });
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
