// The requests apps/api/tests/fuzz.test.ts found answered with a 5xx, a body
// that is not problem+json, or a 2xx for an invalid request, shrunk to their
// smallest form. Each now gets a catalogued 4xx.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, demoModelBytes, mlpInput, multipartBody, type TestApp } from './helpers.ts';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
  expect((await t.registerModel('mlp')).statusCode).toBe(201);
});
afterAll(() => t.close());

const job = (extra: string) => `{"model":"mlp","inputs":[${JSON.stringify(mlpInput())}]${extra}}`;
const JSON_TYPE = { 'content-type': 'application/json' };

const cases: Array<[string, { method: 'GET' | 'POST'; url: string; payload?: string; headers?: Record<string, string>; admin?: boolean }, number, string]> = [
  [
    'metadata value with NUL (jsonb cannot hold it)',
    { method: 'POST', url: '/v1/jobs', payload: job(',"metadata":{"k":"\\u0000"}'), headers: JSON_TYPE },
    400,
    'VALIDATION_FAILED',
  ],
  [
    'metadata key with a lone surrogate',
    { method: 'POST', url: '/v1/jobs', payload: job(',"metadata":{"\\ud800":"v"}'), headers: JSON_TYPE },
    400,
    'VALIDATION_FAILED',
  ],
  [
    'metadata value that is an object under a key with a newline',
    { method: 'POST', url: '/v1/jobs', payload: job(',"metadata":{"\\n":{"a":1}}'), headers: JSON_TYPE },
    400,
    'VALIDATION_FAILED',
  ],
  [
    'metadata key over 64 characters',
    { method: 'POST', url: '/v1/jobs', payload: job(`,"metadata":{"${'k'.repeat(65)}":"v"}`), headers: JSON_TYPE },
    400,
    'VALIDATION_FAILED',
  ],
  ['job list filtered by a model name with NUL', { method: 'GET', url: '/v1/jobs?model=a%00b' }, 400, 'VALIDATION_FAILED'],
  ['job list after a leap second (Date cannot read it)', { method: 'GET', url: '/v1/jobs?createdAfter=2024-01-01T23:59:60Z' }, 400, 'VALIDATION_FAILED'],
  ['job list before a time with an hour-only offset', { method: 'GET', url: '/v1/jobs?createdBefore=2024-01-01T00:00:00%2B05' }, 400, 'VALIDATION_FAILED'],
  ['job list limit of 1e999 (Ajv coerces it to Infinity)', { method: 'GET', url: '/v1/jobs?limit=1e999' }, 400, 'VALIDATION_FAILED'],
  ['stats window of Infinity minutes', { method: 'GET', url: '/v1/stats?windowMinutes=Infinity' }, 400, 'VALIDATION_FAILED'],
  ['audit page of -Infinity entries', { method: 'GET', url: '/v1/audit?limit=-Infinity', admin: true }, 400, 'VALIDATION_FAILED'],
  [
    'key with a rate limit of "Infinity"',
    { method: 'POST', url: '/v1/keys', payload: '{"name":"k","rateLimitPerMin":"Infinity"}', headers: JSON_TYPE, admin: true },
    400,
    'VALIDATION_FAILED',
  ],
  ['key named with NUL', { method: 'POST', url: '/v1/keys', payload: '{"name":"a\\u0000"}', headers: JSON_TYPE, admin: true }, 400, 'VALIDATION_FAILED'],
  ['URL with a broken percent-escape', { method: 'GET', url: '/v1/jobs/%%' }, 400, 'MALFORMED_REQUEST'],
  ['path parameter over 100 characters', { method: 'GET', url: `/v1/models/${'a'.repeat(101)}` }, 400, 'VALIDATION_FAILED'],
  [
    'upload without a multipart boundary',
    { method: 'POST', url: '/v1/models', payload: 'x', headers: { 'content-type': 'multipart/form-data' }, admin: true },
    400,
    'MALFORMED_BODY',
  ],
  [
    'upload cut short after one byte',
    { method: 'POST', url: '/v1/models', payload: '-', headers: { 'content-type': 'multipart/form-data; boundary=b' }, admin: true },
    400,
    'MALFORMED_BODY',
  ],
];

describe('hostile input the fuzz test found', () => {
  it.each(cases)('%s → %i %s', async (_name, { method, url, payload, headers, admin }, status, code) => {
    const key = admin ? t.adminKey : await t.newKey();
    const res = await t.server.inject({ method, url, payload, headers: { ...headers, ...t.auth(key) } });
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ status, code });
    expect(res.statusCode).toBe(status);
  });

  it.each([['1.5'], ['1e999'], ['-Infinity']])('refuses maxBatchSize %s on upload instead of truncating it', async (maxBatchSize) => {
    const body = multipartBody({ name: 'mlp', maxBatchSize }, { name: 'mlp.onnx', bytes: await demoModelBytes('mlp') });
    const res = await t.server.inject({ method: 'POST', url: '/v1/models', payload: body.payload, headers: { ...body.headers, ...t.auth() } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ pointer: '/body/maxBatchSize' }] });
  });

  it('reads upload fields as the JSON routes do: 1e3 is a thousand', async () => {
    const body = multipartBody({ name: 'mlp', maxBatchSize: '1e3' }, { name: 'mlp.onnx', bytes: await demoModelBytes('mlp') });
    const res = await t.server.inject({ method: 'POST', url: '/v1/models', payload: body.payload, headers: { ...body.headers, ...t.auth() } });
    expect(res.statusCode).toBe(201);
    expect(res.json().batching.maxBatchSize).toBe(1000);
  });
});
