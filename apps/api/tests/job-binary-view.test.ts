import { randomBytes, randomUUID } from 'node:crypto';
import { request } from 'node:http';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { encodeTensorBase64, parseInferResponseBody, type StoredTensor } from '@inferq/contracts';
import { completeJobs, failJobs, startJobs } from '@inferq/db';
import { jobOutputKey } from '@inferq/storage';
import { testBatchRun } from '@inferq/test-utils';
import { buildTestApp, demoModelBytes, mlpInput, type TestApp } from './helpers.ts';

// GET /v1/jobs/:id in the binary framing (issue 18, spec item 3): the job JSON
// with outputs as binary_data_size, then the outputs' bytes, inline or from S3.

/** Outputs over this many bytes are kept in S3. */
const INLINE_TENSOR_MAX_BYTES = 100;
const OCTET = 'application/octet-stream';
const IHCL = 'inference-header-content-length';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ inlineTensorMaxBytes: INLINE_TENSOR_MAX_BYTES });
  expect((await t.registerModel('mlp', await demoModelBytes('mlp'))).statusCode).toBe(201);
});
afterAll(() => t.close());

const get = (url: string, headers: Record<string, string> = {}) => t.server.inject({ method: 'GET', url, headers: { ...t.auth(t.userKey), ...headers } });

async function submit(): Promise<string> {
  const res = await t.server.inject({ method: 'POST', url: '/v1/jobs', headers: t.auth(t.userKey), payload: { model: 'mlp', inputs: [mlpInput()] } });
  expect(res.statusCode, res.body).toBe(202);
  return res.json().id;
}

/** Plays the worker: the job succeeds with these outputs, each inline or in S3 as the tensor store would keep it. */
async function succeed(id: string, outputs: { name: string; shape: number[]; bytes: Uint8Array }[]): Promise<StoredTensor[]> {
  const batchId = randomUUID();
  expect((await startJobs(t.ctx.pool, { ids: [id], workerId: 'w-test', batchId, batchSize: 1 })).size).toBe(1);
  const stored = await Promise.all(
    outputs.map(async ({ name, shape, bytes }, i): Promise<StoredTensor> => {
      const head = { name, datatype: 'FP32' as const, shape, bytes: bytes.byteLength };
      if (bytes.byteLength <= INLINE_TENSOR_MAX_BYTES) return { ...head, b64: encodeTensorBase64(bytes) };
      const key = jobOutputKey(id, new Date(), batchId, i);
      await t.ctx.storage.putObject(key, bytes);
      return { ...head, key };
    }),
  );
  await completeJobs(t.ctx.pool, testBatchRun(batchId), [{ attempt: 1, id, inferMs: 2, items: 1, deviceMs: 2, outputs: stored }]);
  return stored;
}

/** Checks the framing headers against the body and parses it with the contracts codec. */
function parseFramed(res: Awaited<ReturnType<typeof get>>) {
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toBe(OCTET);
  expect(res.headers.vary).toBe('Accept');
  expect(Number(res.headers['content-length'])).toBe(res.rawPayload.byteLength);
  const headerLength = Number(res.headers[IHCL]);
  const parsed = parseInferResponseBody(new Uint8Array(res.rawPayload), headerLength);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed));
  return { headerLength, ...parsed.value };
}

/** The job JSON as GET answers it, each output's `data`/`url` replaced by `parameters.binary_data_size`: what the framed header must be. */
const asFramedHeader = (job: any) =>
  job.outputs ? { ...job, outputs: job.outputs.map(({ data: _d, url: _u, ...o }: any) => ({ ...o, parameters: { binary_data_size: o.bytes } })) } : job;

describe('GET /v1/jobs/:id with Accept: application/octet-stream', () => {
  it('answers the job JSON then the outputs, inline and from S3, byte for byte as the raw downloads', async () => {
    const id = await submit();
    const small = randomBytes(64);
    const large = randomBytes(4096);
    const stored = await succeed(id, [
      { name: 'logits', shape: [1, 16], bytes: small },
      { name: 'embedding', shape: [1, 1024], bytes: large },
    ]);
    expect(stored.map((s) => Boolean(s.key))).toEqual([false, true]);

    const framed = parseFramed(await get(`/v1/jobs/${id}`, { accept: OCTET }));
    const json = (await get(`/v1/jobs/${id}`)).json();
    expect(json.outputs[0].data).toBeDefined();
    expect(json.outputs[1].url).toBeDefined();
    expect(framed.header).toEqual(asFramedHeader(json));
    expect(framed.tensors).toEqual([new Uint8Array(small), new Uint8Array(large)]);
    for (const i of [0, 1]) {
      const raw = await get(`/v1/jobs/${id}/outputs/${i}`);
      expect(new Uint8Array(raw.rawPayload)).toEqual(framed.tensors[i]);
    }
  });

  it('streams an S3 output: read as a stream, never fetched whole', async () => {
    const id = await submit();
    const bytes = randomBytes(8 * 1024 * 1024);
    await succeed(id, [{ name: 'big', shape: [bytes.byteLength / 4], bytes }]);
    const whole = vi.spyOn(t.ctx.storage, 'getObject');
    const streamed = vi.spyOn(t.ctx.storage, 'getObjectStream');
    try {
      const framed = parseFramed(await get(`/v1/jobs/${id}`, { accept: OCTET }));
      expect(Buffer.from(framed.tensors[0]!).equals(bytes)).toBe(true);
      expect(whole).not.toHaveBeenCalled();
      expect(streamed).toHaveBeenCalledTimes(1);
    } finally {
      whole.mockRestore();
      streamed.mockRestore();
    }
  });

  it('closes the S3 stream when the client goes away mid-body', async () => {
    const id = await submit();
    const bytes = randomBytes(8 * 1024 * 1024);
    await succeed(id, [{ name: 'big', shape: [bytes.byteLength / 4], bytes }]);
    const streamed = vi.spyOn(t.ctx.storage, 'getObjectStream');
    const address = await t.server.listen({ port: 0, host: '127.0.0.1' });
    try {
      await new Promise<void>((resolve, reject) => {
        const req = request(`${address}/v1/jobs/${id}`, { headers: { ...t.auth(t.userKey), accept: OCTET } }, (res) => {
          res.once('data', () => req.destroy());
          res.on('close', resolve);
        });
        req.on('error', (err) => (req.destroyed ? resolve() : reject(err)));
        req.end();
      });
      expect(streamed).toHaveBeenCalledTimes(1);
      const s3Body = (await streamed.mock.results[0]!.value) as Readable;
      await vi.waitFor(() => expect(s3Body.destroyed).toBe(true));
      expect(s3Body.readableEnded).toBe(false);
    } finally {
      streamed.mockRestore();
    }
  });

  it('answers the header alone for a job without outputs (queued, failed)', async () => {
    const queued = await submit();
    const failed = await submit();
    await failJobs(t.ctx.pool, [{ id: failed, code: 'INFERENCE_FAILED', message: 'boom', final: true }]);
    for (const id of [queued, failed]) {
      const res = await get(`/v1/jobs/${id}`, { accept: OCTET });
      const framed = parseFramed(res);
      expect(framed.headerLength).toBe(res.rawPayload.byteLength);
      expect(framed.tensors).toEqual([]);
      expect(framed.header).toEqual((await get(`/v1/jobs/${id}`)).json());
    }
    expect((await get(`/v1/jobs/${failed}`)).json()).toMatchObject({ status: 'failed', error: { code: 'INFERENCE_FAILED' } });
  });

  it.each([
    [undefined, 'json'],
    ['*/*', 'json'],
    ['application/json', 'json'],
    ['application/*', 'json'],
    ['text/html', 'json'],
    [OCTET, 'framed'],
    [`${OCTET};q=0`, 'json'],
    [`application/json;q=0.5, ${OCTET}`, 'framed'],
    [`${OCTET};q=0.2, application/json`, 'json'],
    [`${OCTET};q=0.9, */*;q=0.1`, 'framed'],
    [`${OCTET}, application/json`, 'framed'],
    [`application/json, ${OCTET}`, 'json'],
  ])('Accept %s answers %s', async (accept, expected) => {
    const id = await submit();
    const res = await get(`/v1/jobs/${id}`, accept === undefined ? {} : { accept });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers.vary).toBe('Accept');
    if (expected === 'framed') expect(parseFramed(res).header).toMatchObject({ id, status: 'queued' });
    else {
      expect(res.headers['content-type']).toContain('application/json');
      expect(res.headers[IHCL]).toBeUndefined();
      expect(res.json()).toMatchObject({ id, status: 'queued' });
    }
  });

  it('answers 410 problem+json for a purged job, whatever Accept says', async () => {
    const id = await submit();
    await succeed(id, [{ name: 'logits', shape: [1, 16], bytes: randomBytes(64) }]);
    expect((await t.server.inject({ method: 'DELETE', url: `/v1/jobs/${id}`, headers: t.auth(t.userKey) })).statusCode).toBe(200);
    for (const accept of [OCTET, `${OCTET}, application/json;q=0.1`, 'application/json']) {
      const res = await get(`/v1/jobs/${id}`, { accept });
      expect(res.statusCode).toBe(410);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.json()).toMatchObject({ code: 'JOB_PURGED', purgeReason: 'deleted' });
    }
  });

  it('answers 404 problem+json for a job that is not there', async () => {
    const res = await get(`/v1/jobs/${randomUUID()}`, { accept: OCTET });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toContain('application/problem+json');
  });
});
