// The binary-body parser on a tiny Fastify app, over a real socket so the
// headers are exactly what a client writes (no content type, chunked bodies,
// a Content-Length far larger than what follows).
import { connect, type AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeInferRequest } from '@inferq/contracts';
import { binaryBodyOf, registerBinaryBody } from './binary-body.ts';
import { registerErrorHandler } from './error-handler.ts';

const BODY_LIMIT_BYTES = 4096;
const HEADER_LIMIT_BYTES = 1024;

let app: FastifyInstance;
let port: number;
beforeAll(async () => {
  app = Fastify({ bodyLimit: BODY_LIMIT_BYTES });
  registerErrorHandler(app);
  // A route opts in by registering the parsers in its own plugin scope.
  await app.register(async (scope) => {
    registerBinaryBody(scope, { headerLimitBytes: HEADER_LIMIT_BYTES });
    scope.post('/infer', { schema: { body: { type: 'object', required: ['inputs'] } } }, async (request) => {
      const framed = binaryBodyOf(request);
      return { header: request.body, binary: framed ? Array.from(framed.binary) : null };
    });
  });
  // A sibling outside that scope keeps today's parsers.
  app.post('/plain', async (request) => ({ body: request.body }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.server.address() as AddressInfo).port;
});
afterAll(() => app?.close());

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** Writes a request (head, then body chunks) and reads the answer; `Connection: close` ends it. */
function send(head: string[], ...body: (string | Uint8Array)[]): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (d) => received.push(d));
    socket.on('error', () => {});
    socket.on('close', () => {
      const text = Buffer.concat(received).toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return reject(new Error(`no answer: ${text}`));
      const chunked = /transfer-encoding: chunked/i.test(text.slice(0, end));
      const raw = text.slice(end + 4);
      const json = chunked ? raw.replace(/^[0-9a-f]+\r\n|\r\n[0-9a-f]+\r\n/gi, '').replace(/\r\n$/, '') : raw;
      resolve({ status: Number(text.split(' ')[1]), body: JSON.parse(json || '{}') });
    });
    socket.on('connect', () => {
      socket.write([...head, 'Host: x', 'Connection: close', '', ''].join('\r\n'));
      for (const b of body) socket.write(b);
    });
  });
}

const post = (path: string, headers: Record<string, string | number>, body: Uint8Array | string = '') => {
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  const lines = Object.entries({ 'content-length': bytes.byteLength, ...headers }).map(([k, v]) => `${k}: ${v}`);
  return send([`POST ${path} HTTP/1.1`, ...lines], bytes);
};

const framed = ok(encodeInferRequest({ inputs: [{ name: 'x', datatype: 'UINT8', shape: [3], data: new Uint8Array([7, 8, 9]) }], outputs: [{ name: 'y' }] }));
function ok<T>(r: { ok: true; value: T } | { ok: false }): T {
  if (!r.ok) throw new Error(JSON.stringify(r));
  return r.value;
}
const IHCL = 'inference-header-content-length';

describe('binary bodies a route scope opts into', () => {
  it.each([
    ['application/octet-stream (the C++ client, and the protocol document)', { 'content-type': 'application/octet-stream' }],
    ["no content type (tritonclient's Python client sends none)", {}],
    ['application/json with the header length', { 'content-type': 'application/json' }],
  ])('reads %s', async (_label, type) => {
    const answer = await post('/infer', { ...type, [IHCL]: framed.headerLength! }, framed.body);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ header: JSON.parse(new TextDecoder().decode(framed.body.subarray(0, framed.headerLength))), binary: [7, 8, 9] });
  });

  it('reads a chunked framed body', async () => {
    const b = framed.body;
    const chunk = (part: Uint8Array) => [`${part.byteLength.toString(16)}\r\n`, part, '\r\n'];
    const answer = await send(
      ['POST /infer HTTP/1.1', 'transfer-encoding: chunked', 'content-type: application/octet-stream', `${IHCL}: ${framed.headerLength}`],
      ...chunk(b.subarray(0, 10)),
      ...chunk(b.subarray(10)),
      '0\r\n\r\n',
    );
    expect(answer).toMatchObject({ status: 200, body: { binary: [7, 8, 9] } });
  });

  it('keeps plain JSON bodies as they were: parsed, validated, no binary section', async () => {
    expect(await post('/infer', { 'content-type': 'application/json' }, '{"inputs":[]}')).toEqual({
      status: 200,
      body: { header: { inputs: [] }, binary: null },
    });
    expect(await post('/infer', { 'content-type': 'application/json' }, '{"inputs":')).toMatchObject({ status: 400, body: { code: 'MALFORMED_BODY' } });
    expect(await post('/infer', { 'content-type': 'application/json' }, '{}')).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } });
  });

  it('validates the JSON header with the route schema and refuses prototype poisoning in it', async () => {
    const header = '{"outputs":[]}';
    expect(await post('/infer', { 'content-type': 'application/octet-stream', [IHCL]: header.length }, header)).toMatchObject({
      status: 400,
      body: { code: 'VALIDATION_FAILED' },
    });
    const poisoned = '{"inputs":[],"__proto__":{"x":1}}';
    expect(await post('/infer', { 'content-type': 'application/octet-stream', [IHCL]: poisoned.length }, poisoned)).toMatchObject({
      status: 400,
      body: { code: 'MALFORMED_BODY', errors: [{ pointer: '/body' }] },
    });
  });

  it('leaves routes outside the scope as they were (octet-stream is 415 there)', async () => {
    const answer = await post('/plain', { 'content-type': 'application/octet-stream', [IHCL]: framed.headerLength! }, framed.body);
    expect(answer).toMatchObject({ status: 415, body: { code: 'UNSUPPORTED_MEDIA_TYPE' } });
  });
});

describe('refusals made from the headers, before the body is read', () => {
  it('answers a multi-GB Content-Length with 413 without waiting for the body', async () => {
    const answer = await send(['POST /infer HTTP/1.1', 'content-type: application/octet-stream', 'content-length: 5000000000', `${IHCL}: 10`]);
    expect(answer).toMatchObject({ status: 413, body: { code: 'PAYLOAD_TOO_LARGE' } });
  });

  it.each([
    ['not an integer', '1.5'],
    ['negative', '-1'],
    ['past the body', String(framed.body.byteLength + 1)],
    ['zero (a raw binary request, not served)', '0'],
  ])('refuses an Inference-Header-Content-Length %s with 400', async (_label, value) => {
    const answer = await post('/infer', { 'content-type': 'application/octet-stream', [IHCL]: value }, framed.body);
    expect(answer).toMatchObject({ status: 400, body: { code: 'BINARY_HEADER_LENGTH_INVALID', errors: [{ pointer: `/headers/${IHCL}` }] } });
  });

  it('refuses a JSON header over its limit with 413', async () => {
    const body = new Uint8Array(HEADER_LIMIT_BYTES + 10);
    const answer = await post('/infer', { 'content-type': 'application/octet-stream', [IHCL]: HEADER_LIMIT_BYTES + 1 }, body);
    expect(answer).toMatchObject({ status: 413, body: { code: 'PAYLOAD_TOO_LARGE' } });
  });

  it('refuses a compressed framed body with 415, and other content types with 415', async () => {
    const gzip = await post('/infer', { 'content-type': 'application/octet-stream', 'content-encoding': 'gzip', [IHCL]: framed.headerLength! }, framed.body);
    expect(gzip).toMatchObject({ status: 415, body: { code: 'UNSUPPORTED_MEDIA_TYPE' } });
    expect(await post('/infer', { 'content-type': 'application/x-www-form-urlencoded' }, 'a=1')).toMatchObject({
      status: 415,
      body: { code: 'UNSUPPORTED_MEDIA_TYPE' },
    });
  });

  it('stops reading a chunked body at the limit with 413', async () => {
    const big = new Uint8Array(BODY_LIMIT_BYTES + 1);
    const answer = await send(
      ['POST /infer HTTP/1.1', 'transfer-encoding: chunked', 'content-type: application/octet-stream', `${IHCL}: 2`],
      `${big.byteLength.toString(16)}\r\n`,
      big,
      '\r\n0\r\n\r\n',
    );
    expect(answer).toMatchObject({ status: 413, body: { code: 'PAYLOAD_TOO_LARGE' } });
  });
});
