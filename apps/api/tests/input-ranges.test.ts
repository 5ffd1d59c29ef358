// A value that does not fit its tensor's datatype is a 400 INPUT_DATA_INVALID
// naming the input and the element, on /v1/jobs and on the KServe v2 infer
// route alike, over a model with an input of every datatype.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { DataType } from '@inferq/contracts';
import { createRedisConnection, type RedisClient } from '@inferq/queue';
import { publishFakeWorker } from '@inferq/test-utils';
import { TYPED_DATATYPES, TYPED_MODEL, allTypesModel, typedInputName, typedJobBody } from './fuzz/typed-bodies.ts';
import { buildTestApp, type TestApp } from './helpers.ts';

const DATATYPES = TYPED_DATATYPES;
const inputName = typedInputName;

let t: TestApp;
let redis: RedisClient;
beforeAll(async () => {
  t = await buildTestApp();
  // Connects while the model is registered (no offline queue).
  redis = createRedisConnection(t.ctx.env.REDIS_URL!, 'producer');
  expect((await t.registerModel(TYPED_MODEL, allTypesModel())).statusCode).toBe(201);
  // A live worker for the model, so the v2 route gets as far as decoding the data.
  await publishFakeWorker(redis, t.ctx.prefix, 'w-input-ranges', [TYPED_MODEL]);
});
afterAll(async () => {
  await redis?.quit();
  await t?.close();
});

const ZERO: Record<DataType, string> = Object.fromEntries(DATATYPES.map((d) => [d, d === 'BOOL' ? 'false' : d === 'BYTES' ? '""' : '0'])) as Record<
  DataType,
  string
>;
/** Every input valid, except `bad` (JSON text, so `1e400` reaches the server as written) as element 1 of `target`. */
const inputsText = (target: DataType, bad: string, nested: boolean): string =>
  `[${DATATYPES.map((d) => {
    const second = d === target ? bad : ZERO[d];
    const data = nested ? `[[${ZERO[d]},${second}]]` : `[${ZERO[d]},${second}]`;
    return `{"name":"${inputName(d)}","datatype":"${d}","shape":[1,2],"data":${data}}`;
  }).join(',')}]`;

const post = (url: string, payload: string) => t.server.inject({ method: 'POST', url, payload, headers: { ...t.auth(), 'content-type': 'application/json' } });

const cases: Array<[DataType, string, string]> = [
  ['FP32', '1e400', 'element 1 (value Infinity) does not fit FP32'],
  ['FP32', '-1e400', 'element 1 (value -Infinity) does not fit FP32'],
  ['FP32', '3.5e38', 'element 1 (value 3.5e+38) does not fit FP32'],
  ['FP64', '1e400', 'element 1 (value Infinity) does not fit FP64'],
  ['FP16', '65520', 'element 1 (value 65520) does not fit FP16'],
  ['FP16', '-1e6', 'element 1 (value -1000000) does not fit FP16'],
  ['INT8', '128', 'element 1 (value 128) does not fit INT8 (-128…127)'],
  ['INT16', '-32769', 'element 1 (value -32769) does not fit INT16'],
  ['INT32', '2147483648', 'element 1 (value 2147483648) does not fit INT32'],
  ['UINT8', '-1', 'element 1 (value -1) does not fit UINT8 (0…255)'],
  ['UINT16', '65536', 'element 1 (value 65536) does not fit UINT16'],
  ['UINT32', '4294967296', 'element 1 (value 4294967296) does not fit UINT32'],
  ['INT64', '"9223372036854775808"', 'element 1 (value "9223372036854775808") does not fit INT64'],
  ['INT64', '9223372036854775807', 'is beyond 2^53 as a JSON number'],
  ['UINT64', '"-1"', 'element 1 (value "-1") does not fit UINT64'],
  ['UINT64', '"18446744073709551616"', 'does not fit UINT64'],
  ['INT8', '1.5', 'element 1 (value 1.5) is not an integer (INT8)'],
  ['INT64', '2.5', 'element 1 (value 2.5) is not an integer (INT64)'],
  ['BOOL', '2', 'element 1 (value 2) is not a valid BOOL (true, false, 0 or 1)'],
  ['BOOL', '"true"', 'is not a valid BOOL'],
  ['BYTES', '7', 'element 1 (value 7) is not a valid BYTES element (a string)'],
];

describe('values that do not fit their datatype', () => {
  it('accepts a body of boundary values in every datatype', async () => {
    const res = await post('/v1/jobs', `{"model":"${TYPED_MODEL}","inputs":${inputsText('FP16', '65504', false)}}`);
    expect(res.statusCode, res.body).toBe(202);
  });

  it.each(cases)('/v1/jobs refuses %s %s with INPUT_DATA_INVALID pointing at the element', async (datatype, bad, detail) => {
    const index = DATATYPES.indexOf(datatype);
    for (const nested of [false, true]) {
      const res = await post('/v1/jobs', `{"model":"${TYPED_MODEL}","inputs":${inputsText(datatype, bad, nested)}}`);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      const problem = res.json();
      expect(problem).toMatchObject({ status: 400, code: 'INPUT_DATA_INVALID', detail: expect.stringContaining(`input "${inputName(datatype)}": `) });
      expect(problem.detail).toContain(detail);
      const pointer = `/inputs/${index}/data/${nested ? '0/1' : '1'}`;
      expect(problem.errors).toEqual([{ pointer, code: 'INPUT_DATA_INVALID', detail: problem.detail }]);
    }
  });

  it('refuses BOOL bytes other than 0 or 1 in base64 data and in a framed /v2 body, naming the element', async () => {
    const index = DATATYPES.indexOf('BOOL');
    const withBool = (bool: object) =>
      `[${DATATYPES.map((d) => {
        const head = `"name":"${inputName(d)}","datatype":"${d}","shape":[1,2]`;
        return d === 'BOOL' ? JSON.stringify({ ...JSON.parse(`{${head}}`), ...bool }) : `{${head},"data":[${ZERO[d]},${ZERO[d]}]}`;
      }).join(',')}]`;
    const base64 = await post('/v1/jobs', `{"model":"${TYPED_MODEL}","inputs":${withBool({ data: Buffer.from([0, 2]).toString('base64') })}}`);
    expect(base64.statusCode, base64.body).toBe(400);
    expect(base64.json()).toMatchObject({ code: 'INPUT_DATA_INVALID', detail: 'input "x_bool": base64 data: element 1 (byte 2) is not a valid BOOL (0 or 1)' });
    expect(base64.json().errors[0].pointer).toBe(`/inputs/${index}/data/1`);

    const header = Buffer.from(`{"inputs":${withBool({ parameters: { binary_data_size: 2 } })}}`);
    const framed = await t.server.inject({
      method: 'POST',
      url: `/v2/models/${TYPED_MODEL}/infer`,
      payload: Buffer.concat([header, Buffer.from([1, 7])]),
      headers: { ...t.auth(), 'content-type': 'application/octet-stream', 'inference-header-content-length': String(header.byteLength) },
    });
    expect(framed.statusCode, framed.body).toBe(400);
    expect(framed.json()).toMatchObject({ code: 'INPUT_DATA_INVALID', detail: 'input "x_bool": element 1 (byte 7) is not a valid BOOL (0 or 1)' });
    expect(framed.json().errors[0].pointer).toBe(`/inputs/${index}`);
  });

  it.each(cases)('/v2/models/…/infer refuses %s %s the same way, with the protocol `error`', async (datatype, bad, detail) => {
    for (const url of [`/v2/models/${TYPED_MODEL}/infer`, `/v2/models/${TYPED_MODEL}/versions/1/infer`]) {
      const res = await post(url, `{"inputs":${inputsText(datatype, bad, false)}}`);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      const problem = res.json();
      expect(problem).toMatchObject({ code: 'INPUT_DATA_INVALID', error: problem.detail });
      expect(problem.detail).toMatch(new RegExp(`^input "${inputName(datatype)}": element 1 `));
      expect(problem.detail).toContain(detail);
      expect(problem.errors[0].pointer).toBe(`/inputs/${DATATYPES.indexOf(datatype)}/data/1`);
    }
  });

  it('accepts generated bodies whose every element fits, and refuses each with one that does not', { timeout: 60_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(typedJobBody, async ({ text, unfit }) => {
        const res = await post('/v1/jobs', text);
        if (unfit === undefined) return void expect(res.statusCode, res.body).toBe(202);
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json()).toMatchObject({
          code: 'INPUT_DATA_INVALID',
          detail: expect.stringMatching(new RegExp(`^input "${inputName(unfit)}": element \\d`)),
        });
      }),
      { numRuns: 150 },
    );
  });
});
