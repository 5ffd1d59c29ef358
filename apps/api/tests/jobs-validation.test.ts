import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, mlpInput, type TestApp } from './helpers.ts';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ bodyLimitBytes: 256 * 1024, inputMaxBytes: 64 * 1024 });
  expect((await t.registerModel('mlp')).statusCode).toBe(201);
  expect((await t.registerModel('transformer')).statusCode).toBe(201);
});
afterAll(() => t.close());

const submit = (body: unknown) => t.server.inject({ method: 'POST', url: '/v1/jobs', payload: body as object, headers: t.auth() });
const input = (over: Record<string, unknown>) => ({ ...mlpInput(), ...over });

const cases: Array<[string, unknown, number, string]> = [
  ['unknown model', { model: 'nope', inputs: [mlpInput()] }, 404, 'MODEL_NOT_FOUND'],
  ['unknown model version', { model: 'mlp:9', inputs: [mlpInput()] }, 404, 'MODEL_NOT_FOUND'],
  ['malformed model reference', { model: '../../etc/passwd', inputs: [mlpInput()] }, 404, 'MODEL_NOT_FOUND'],
  ['wrong tensor name', { model: 'mlp', inputs: [input({ name: 'x' })] }, 400, 'INPUT_UNKNOWN'],
  ['duplicate tensor', { model: 'mlp', inputs: [mlpInput(), mlpInput()] }, 400, 'INPUT_DUPLICATE'],
  ['missing input', { model: 'transformer', inputs: [{ name: 'input_ids', datatype: 'INT64', shape: [1, 4], data: [1, 2, 3, 4] }] }, 400, 'INPUT_MISSING'],
  ['wrong datatype', { model: 'mlp', inputs: [input({ datatype: 'INT32', data: Array(64).fill(1) })] }, 400, 'INPUT_DATATYPE_MISMATCH'],
  ['unsupported datatype', { model: 'mlp', inputs: [input({ datatype: 'BF16' })] }, 400, 'DATATYPE_UNSUPPORTED'],
  ['BYTES on an FP32 input', { model: 'mlp', inputs: [input({ datatype: 'BYTES', data: Array(64).fill('x') })] }, 400, 'INPUT_DATATYPE_MISMATCH'],
  ['wrong rank', { model: 'mlp', inputs: [input({ shape: [64] })] }, 400, 'INPUT_SHAPE_MISMATCH'],
  ['wrong fixed dim', { model: 'mlp', inputs: [input({ shape: [1, 63], data: Array(63).fill(0) })] }, 400, 'INPUT_SHAPE_MISMATCH'],
  ['empty batch', { model: 'mlp', inputs: [input({ shape: [0, 64], data: [] })] }, 400, 'INPUT_SHAPE_MISMATCH'],
  ['negative dim', { model: 'mlp', inputs: [input({ shape: [-1, 64] })] }, 400, 'VALIDATION_FAILED'],
  ['fractional dim', { model: 'mlp', inputs: [input({ shape: [1.5, 64] })] }, 400, 'VALIDATION_FAILED'],
  ['too few values', { model: 'mlp', inputs: [input({ data: [1, 2, 3] })] }, 400, 'INPUT_DATA_INVALID'],
  ['non-numeric values', { model: 'mlp', inputs: [input({ data: Array(64).fill('x') })] }, 400, 'INPUT_DATA_INVALID'],
  ['bad base64', { model: 'mlp', inputs: [input({ data: '!!!notbase64' })] }, 400, 'INPUT_DATA_INVALID'],
  ['base64 of the wrong length', { model: 'mlp', inputs: [input({ data: Buffer.alloc(12).toString('base64') })] }, 400, 'INPUT_DATA_INVALID'],
  [
    'int64 out of range',
    {
      model: 'transformer',
      inputs: [
        { name: 'input_ids', datatype: 'INT64', shape: [1, 1], data: ['99999999999999999999'] },
        { name: 'attention_mask', datatype: 'INT64', shape: [1, 1], data: [1] },
      ],
    },
    400,
    'INPUT_DATA_INVALID',
  ],
  [
    'batch dims disagree',
    {
      model: 'transformer',
      inputs: [
        { name: 'input_ids', datatype: 'INT64', shape: [1, 2], data: [1, 2] },
        { name: 'attention_mask', datatype: 'INT64', shape: [2, 1], data: [1, 1] },
      ],
    },
    400,
    'INPUT_BATCH_MISMATCH',
  ],
  ['shape whose product overflows', { model: 'mlp', inputs: [input({ shape: [2 ** 52, 64] })] }, 400, 'INPUT_SHAPE_MISMATCH'],
  ['declared size over the input limit', { model: 'mlp', inputs: [input({ shape: [1024, 64] })] }, 413, 'INPUT_TOO_LARGE'],
  ['unknown body field', { model: 'mlp', inputs: [mlpInput()], extra: 1 }, 400, 'VALIDATION_FAILED'],
  ['bad priority', { model: 'mlp', inputs: [mlpInput()], priority: 'urgent' }, 400, 'VALIDATION_FAILED'],
  ['no inputs', { model: 'mlp', inputs: [] }, 400, 'VALIDATION_FAILED'],
];

describe('submit validation', () => {
  it.each(cases)('%s → %i %s', async (_name, body, status, code) => {
    const res = await submit(body);
    expect(res.statusCode).toBe(status);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toMatchObject({ status, code });
  });

  it('points at the offending field', async () => {
    const res = await submit({ model: 'mlp', inputs: [input({ shape: [1, 65] })] });
    expect(res.json().errors[0].pointer).toBe('/inputs/0/shape');
  });

  it('rejects malformed JSON, a wrong content type and an oversized body, then keeps serving', async () => {
    const broken = await t.server.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: '{"model": "mlp", "inputs": [',
      headers: { ...t.auth(), 'content-type': 'application/json' },
    });
    expect(broken.statusCode).toBe(400);
    expect(broken.json().code).toBe('MALFORMED_BODY');
    const text = await t.server.inject({ method: 'POST', url: '/v1/jobs', payload: 'hello', headers: { ...t.auth(), 'content-type': 'text/plain' } });
    expect(text.statusCode).toBe(415);
    expect(text.json().code).toBe('UNSUPPORTED_MEDIA_TYPE');
    const huge = await t.server.inject({
      method: 'POST',
      url: '/v1/jobs',
      payload: JSON.stringify({ model: 'mlp', inputs: [input({ data: Array(100_000).fill(0.123456) })] }),
      headers: { ...t.auth(), 'content-type': 'application/json' },
    });
    expect(huge.statusCode).toBe(413);
    expect(huge.json().code).toBe('PAYLOAD_TOO_LARGE');
    const ok = await submit({ model: 'mlp', inputs: [mlpInput()] });
    expect(ok.statusCode).toBe(202);
  });

  it('answers unknown routes and bad ids with problem+json', async () => {
    const route = await t.server.inject({ method: 'GET', url: '/v1/nothing', headers: t.auth() });
    expect(route.json()).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    const id = await t.server.inject({ method: 'GET', url: "/v1/jobs/1'%20OR%201=1", headers: t.auth() });
    expect(id.json()).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    const missing = await t.server.inject({ method: 'GET', url: '/v1/jobs/00000000-0000-4000-8000-000000000000', headers: t.auth() });
    expect(missing.json()).toMatchObject({ status: 404, code: 'JOB_NOT_FOUND' });
  });
});
