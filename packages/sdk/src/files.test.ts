import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, InferqError, type FetchLike } from './index.ts';

const FILE = { id: 'file-0190a1b29d8e7f6a8b5c4d3e2f1a0b9c', object: 'file', bytes: 2, created_at: 1, filename: 'x', purpose: 'batch', status: 'processed' };

interface Asked {
  url: string;
  method: string;
  headers: Headers;
  body: unknown;
  duplex: unknown;
}

/** A client whose fetch records each request and answers from `answers` in turn (the last one again once they run out). */
function clientAnswering(...answers: Array<(asked: Asked) => Response | Promise<Response>>) {
  const asked: Asked[] = [];
  const fetch: FetchLike = async (url, init = {}) => {
    const request = { url, method: init.method ?? 'GET', headers: new Headers(init.headers), body: init.body, duplex: (init as { duplex?: unknown }).duplex };
    asked.push(request);
    return answers[Math.min(asked.length, answers.length) - 1]!(request);
  };
  return { asked, client: createClient({ baseUrl: 'http://api.test', apiKey: 'k', fetch, submitRetry: { attempts: 3, maxElapsedMs: 5000 } }) };
}

const problem = (status: number, code: string, headers: Record<string, string> = {}) =>
  Response.json({ type: 'about:blank', title: code, status, code }, { status, headers: { 'content-type': 'application/problem+json', ...headers } });

/** A request's multipart body as the server reads it: `purpose`, and the file's name and text. */
async function readForm(asked: Asked) {
  const form =
    asked.body instanceof FormData
      ? asked.body
      : await new Response(asked.body as ReadableStream, { headers: { 'content-type': asked.headers.get('content-type')! } }).formData();
  const file = form.get('file') as File;
  return { purpose: form.get('purpose'), filename: file.name, text: await file.text() };
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'inferq-sdk-files-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const LINES = '{"custom_id":"a"}\n{"custom_id":"b"}\n';

describe('files.upload', () => {
  it('sends a path as multipart, the file a Blob opened from disk (fetch streams it), named by its last part', async () => {
    const path = join(dir, 'requests.jsonl');
    await writeFile(path, LINES);
    const { asked, client } = clientAnswering(() => Response.json(FILE));
    expect(await client.files.upload(path)).toEqual(FILE);
    expect(asked[0]).toMatchObject({ url: 'http://api.test/v1/files', method: 'POST' });
    expect(asked[0]!.body).toBeInstanceOf(FormData);
    expect(await readForm(asked[0]!)).toEqual({ purpose: 'batch', filename: 'requests.jsonl', text: LINES });
  });

  it('streams a Node Readable as a multipart body of its own (duplex half), read once as it is sent', async () => {
    const { asked, client } = clientAnswering(() => Response.json(FILE));
    await client.files.upload(Readable.from([Buffer.from('{"custom_id":'), '"a"}\n']), { filename: 'a "quoted".jsonl' });
    expect(asked[0]!.body).toBeInstanceOf(ReadableStream);
    expect(asked[0]!.duplex).toBe('half');
    expect(asked[0]!.headers.get('content-type')).toMatch(/^multipart\/form-data; boundary=inferq-/);
    // Sent as a browser's form sends it (`%22`), read back by the same rules.
    expect(await readForm(asked[0]!)).toEqual({ purpose: 'batch', filename: 'a "quoted".jsonl', text: '{"custom_id":"a"}\n' });
  });

  it("sends expiresAfterS as OpenAI's expires_after fields, in a form and in a streamed body alike", async () => {
    const { asked, client } = clientAnswering(() => Response.json(FILE));
    await client.files.upload(new Blob([LINES]), { expiresAfterS: 7_200 });
    await client.files.upload(Readable.from([LINES]), { expiresAfterS: 3_600 });
    const fields = async (a: Asked) => {
      const form =
        a.body instanceof FormData
          ? a.body
          : await new Response(a.body as ReadableStream, { headers: { 'content-type': a.headers.get('content-type')! } }).formData();
      return [form.get('expires_after[anchor]'), form.get('expires_after[seconds]')];
    };
    expect(await fields(asked[0]!)).toEqual(['created_at', '7200']);
    expect(await fields(asked[1]!)).toEqual(['created_at', '3600']);
  });

  it("takes a Blob, a File's name, a web ReadableStream, and a Node file stream's name", async () => {
    const path = join(dir, 'streamed.jsonl');
    await writeFile(path, LINES);
    const { asked, client } = clientAnswering(() => Response.json(FILE));
    await client.files.upload(new File([LINES], 'mine.jsonl'));
    await client.files.upload(new Blob([LINES]));
    await client.files.upload(new Blob([LINES]).stream(), { filename: 'web.jsonl' });
    await client.files.upload(createReadStream(path));
    expect(await Promise.all(asked.map(readForm))).toEqual([
      { purpose: 'batch', filename: 'mine.jsonl', text: LINES },
      { purpose: 'batch', filename: 'batch.jsonl', text: LINES },
      { purpose: 'batch', filename: 'web.jsonl', text: LINES },
      { purpose: 'batch', filename: 'streamed.jsonl', text: LINES },
    ]);
  });

  it('sends a Blob again when refused for now (429, after Retry-After), a stream never; no answer is not retried', async () => {
    const refusedOnce = clientAnswering(
      () => problem(429, 'RATE_LIMITED', { 'retry-after': '0' }),
      () => Response.json(FILE),
    );
    expect(await refusedOnce.client.files.upload(new Blob([LINES]))).toEqual(FILE);
    expect(refusedOnce.asked).toHaveLength(2);
    expect(await readForm(refusedOnce.asked[1]!)).toMatchObject({ text: LINES });

    const stream = clientAnswering(() => problem(503, 'SERVICE_UNAVAILABLE', { 'retry-after': '0' }));
    await expect(stream.client.files.upload(Readable.from([LINES]))).rejects.toMatchObject({ status: 503 });
    expect(stream.asked).toHaveLength(1);

    const unanswered = clientAnswering(() => Promise.reject(new TypeError('fetch failed')));
    await expect(unanswered.client.files.upload(new Blob([LINES]))).rejects.toMatchObject({ code: 'NETWORK_ERROR' });
    expect(unanswered.asked).toHaveLength(1);
  });

  it('throws the problem of a refused upload', async () => {
    const { client } = clientAnswering(() => problem(413, 'PAYLOAD_TOO_LARGE'));
    const err = await client.files.upload(new Blob([LINES])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InferqError);
    expect(err).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
  });
});

describe('files', () => {
  it('list follows `after` = last_id through every page; page, get and delete are one call each', async () => {
    const page = (ids: string[], more: boolean) =>
      Response.json({ object: 'list', data: ids.map((id) => ({ ...FILE, id })), first_id: ids[0], last_id: ids.at(-1), has_more: more });
    const { asked, client } = clientAnswering(
      () => page(['f3', 'f2'], true),
      () => page(['f1'], false),
    );
    const ids: string[] = [];
    for await (const file of client.files.list({ limit: 2, purpose: 'batch' })) ids.push(file.id);
    expect(ids).toEqual(['f3', 'f2', 'f1']);
    expect(asked.map((a) => a.url)).toEqual(['http://api.test/v1/files?limit=2&purpose=batch', 'http://api.test/v1/files?limit=2&purpose=batch&after=f2']);

    const one = clientAnswering(() => Response.json({ id: 'f1', object: 'file', deleted: true }));
    expect(await one.client.files.delete('f1')).toEqual({ id: 'f1', object: 'file', deleted: true });
    await one.client.files.get('f1');
    expect(one.asked.map((a) => `${a.method} ${a.url}`)).toEqual(['DELETE http://api.test/v1/files/f1', 'GET http://api.test/v1/files/f1']);
  });

  it('content streams the bytes; lines yields each line as it arrives, across chunks, without CRs or blank lines', async () => {
    const bytes = new TextEncoder().encode('{"a":"é"}\r\n\n{"b":2}\n{"c":3}');
    // Split inside the two-byte é and inside a line.
    const chunks = [bytes.slice(0, 7), bytes.slice(7, 16), bytes.slice(16)];
    const body = () => new ReadableStream({ start: (c) => (chunks.forEach((chunk) => c.enqueue(chunk)), c.close()) });
    const { asked, client } = clientAnswering(() => new Response(body(), { headers: { 'content-type': 'application/jsonl' } }));
    const lines: string[] = [];
    for await (const line of client.files.lines('file-1-output')) lines.push(line);
    expect(lines).toEqual(['{"a":"é"}', '{"b":2}', '{"c":3}']);
    expect(asked[0]!.url).toBe('http://api.test/v1/files/file-1-output/content');
    expect(await new Response(await client.files.content('file-1-output')).text()).toBe(new TextDecoder().decode(bytes));
  });

  it('lines stops reading when the loop is left', async () => {
    let canceled = false;
    const body = new ReadableStream({ pull: (c) => c.enqueue(new TextEncoder().encode('{"x":1}\n')), cancel: () => void (canceled = true) });
    const { client } = clientAnswering(() => new Response(body));
    for await (const line of client.files.lines('f')) if (line) break;
    expect(canceled).toBe(true);
  });
});
