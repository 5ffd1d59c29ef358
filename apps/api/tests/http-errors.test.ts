// Errors the HTTP layer makes before any route runs, over a real socket: each
// is a complete HTTP/1.1 answer with a problem+json body whose code is in the
// catalogue (Node's own answer to a 20 KiB header is plain JSON otherwise).
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCatalogue, isErrorCode } from '@inferq/contracts';
import { buildTestApp, type TestApp } from './helpers.ts';

let t: TestApp;
let port: number;
beforeAll(async () => {
  t = await buildTestApp({ bodyLimitBytes: 64 * 1024, headersTimeoutMs: 300, requestTimeoutMs: 1_000 });
  await t.server.listen({ host: '127.0.0.1', port: 0 });
  port = (t.server.server.address() as AddressInfo).port;
});
afterAll(() => t?.close());

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Writes `chunks` on a fresh connection and reads the first response. The
 * client never half-closes: Node would abort a request still being answered.
 */
function exchange(chunks: Array<string | Buffer>): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    const parse = (): RawAnswer | undefined => {
      const text = Buffer.concat(received).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return undefined;
      const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      const length = Number(headers['content-length'] ?? -1);
      const body = Buffer.concat(received).subarray(Buffer.byteLength(text.slice(0, end + 4), 'latin1'));
      if (length < 0 || body.length < length) return undefined;
      return { status: Number(statusLine!.split(' ')[1]), headers, body: body.subarray(0, length).toString('utf8') };
    };
    socket.on('data', (d) => {
      received.push(d);
      const answer = parse();
      if (answer) {
        socket.destroy();
        resolve(answer);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => reject(new Error(`connection closed without a whole answer: ${JSON.stringify(Buffer.concat(received).toString())}`)));
    socket.on('connect', () => {
      for (const c of chunks) socket.write(c);
    });
  });
}

function expectProblem(answer: RawAnswer, status: number, code: string): void {
  expect(answer.status, answer.body).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = JSON.parse(answer.body) as { code: unknown };
  expect(problem).toMatchObject({ status, code, title: expect.any(String), type: expect.stringContaining('https://inferq.dev/problems/') });
  expect(isErrorCode(problem.code) ? ErrorCatalogue[problem.code].status : undefined).toBe(status);
}

const auth = () => `Authorization: Bearer ${t.adminKey}\r\n`;

describe('errors before a route runs are problem+json with a catalogue code', () => {
  it('431 HEADERS_TOO_LARGE for a 20 KiB header, and the connection is closed', async () => {
    const answer = await exchange([`GET /v1/jobs HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`]);
    expectProblem(answer, 431, 'HEADERS_TOO_LARGE');
    expect(answer.headers.connection).toBe('close');
  });

  it('400 MALFORMED_REQUEST for a garbage request line', async () => {
    for (const line of ['HELLO WORLD\r\n\r\n', 'GET\r\n\r\n', 'GET / HTTP/9.9\r\n\r\n', '\u0000\u0001\u0002 / HTTP/1.1\r\n\r\n']) {
      const answer = await exchange([line]);
      expectProblem(answer, 400, 'MALFORMED_REQUEST');
      expect(answer.headers.connection).toBe('close');
    }
  });

  it('400 MALFORMED_REQUEST for a URL that cannot be decoded', async () => {
    for (const path of ['/%zz', '/v1/jobs/%zz', '/v2/models/%E0%A4%A/infer']) {
      expectProblem(await exchange([`GET ${path} HTTP/1.1\r\nHost: x\r\n${auth()}Connection: close\r\n\r\n`]), 400, 'MALFORMED_REQUEST');
    }
  });

  it('413 PAYLOAD_TOO_LARGE for a body over the limit, declared or chunked', async () => {
    const body = `{"model":"mlp","inputs":[],"pad":"${'x'.repeat(70 * 1024)}"}`;
    const head = `POST /v1/jobs HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\nConnection: close\r\n`;
    expectProblem(await exchange([`${head}Content-Length: ${body.length}\r\n\r\n`, body]), 413, 'PAYLOAD_TOO_LARGE');
    const chunked = `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    expectProblem(await exchange([`${head}Transfer-Encoding: chunked\r\n\r\n`, chunked]), 413, 'PAYLOAD_TOO_LARGE');
  });

  it('501 TRANSFER_ENCODING_UNSUPPORTED for a coding other than chunked; 400 when chunked is not last', async () => {
    const head = `POST /v1/jobs HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\nConnection: close\r\n`;
    // Node refuses these while parsing, before Fastify sees them.
    for (const te of ['gzip', 'chunked, gzip', 'br'])
      expectProblem(await exchange([`${head}Transfer-Encoding: ${te}\r\n\r\n3\r\n{}\n\r\n0\r\n\r\n`]), 501, 'TRANSFER_ENCODING_UNSUPPORTED');
    // Node passes these on: the server refuses them before reading the body.
    for (const te of ['gzip, chunked', 'deflate,chunked'])
      expectProblem(await exchange([`${head}Transfer-Encoding: ${te}\r\n\r\n2\r\n{}\r\n0\r\n\r\n`]), 501, 'TRANSFER_ENCODING_UNSUPPORTED');
    // Both framings at once (request smuggling) is a malformed request.
    const both = `${head}Transfer-Encoding: chunked\r\nContent-Length: 7\r\n\r\n2\r\n{}\r\n0\r\n\r\n`;
    expectProblem(await exchange([both]), 400, 'MALFORMED_REQUEST');
  });

  it('408 REQUEST_TIMEOUT when the headers, or the body, do not arrive in time (HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS)', async () => {
    expectProblem(await exchange(['GET /v1/jobs HTTP/1.1\r\nHost: x\r\n']), 408, 'REQUEST_TIMEOUT');
    const partialBody = `POST /v1/jobs HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"model":`;
    expectProblem(await exchange([partialBody]), 408, 'REQUEST_TIMEOUT');
  });

  it('415 UNSUPPORTED_MEDIA_TYPE for a content type the API does not read', async () => {
    const answer = await exchange([
      `POST /v1/jobs HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: text/csv\r\nContent-Length: 3\r\nConnection: close\r\n\r\na,b`,
    ]);
    expectProblem(answer, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('still serves a request on a fresh connection afterwards', async () => {
    const answer = await exchange([`GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`]);
    expect(answer.status).toBe(200);
  });
});
