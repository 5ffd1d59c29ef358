import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { jobsBulk } from '../src/cli/bulk-submit.ts';
import type { Io } from '../src/cli/command.ts';
import { jobsSubmit } from '../src/cli/jobs-commands.ts';
import { createClient, InferqError, tensor, type ClientOptions, type InferqClient } from '../src/index.ts';

// Submits against an in-process fake API that refuses, hangs up on, or never answers the tries it is told to,
// to show what the SDK sends again, under which key, and when it stops.

interface Seen {
  key: string | undefined;
  contentType: string | undefined;
  body: Buffer;
}
/** What the fake does with the nth try (0-based): answer it, or leave it unanswered by returning without ending `res`. */
type Answer = (res: ServerResponse, n: number, req: IncomingMessage) => void;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const accepted = (res: ServerResponse) => json(res, 202, { id: 'job-1', status: 'queued', links: { self: '/v1/jobs/job-1' } });
const problem = (status: number, code: string, retryAfterS?: number, detail?: string) => (res: ServerResponse) => {
  if (retryAfterS !== undefined) res.setHeader('retry-after', String(retryAfterS));
  res.setHeader('content-type', 'application/problem+json');
  res.writeHead(status).end(JSON.stringify({ type: 'about:blank', title: code, status, code, detail }));
};
const hang = () => {};
function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  server = undefined;
});

/** A fake API answering the nth submit with `answers[n]` (the last one for every later try). */
async function fakeApi(answers: Answer[], options: Partial<ClientOptions> = {}): Promise<{ client: InferqClient; seen: Seen[]; baseUrl: string }> {
  const seen: Seen[] = [];
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const n = seen.length;
      seen.push({ key: req.headers['idempotency-key'] as string | undefined, contentType: req.headers['content-type'], body: Buffer.concat(chunks) });
      answers[Math.min(n, answers.length - 1)]!(res, n, req);
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const baseUrl = `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
  return { client: createClient({ baseUrl, apiKey: 'k', ...options }), seen, baseUrl };
}

const body = { model: 'mlp', inputs: [tensor('features', new Float32Array(64).fill(0.5), [1, 64])] };

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.unreachable('it resolved'),
    (err: unknown) => err,
  );
}

describe('submit retries', () => {
  it('sends a fresh UUID key by default, and the same key and body on every try until 503 Retry-After gives way to 202', async () => {
    const { client, seen } = await fakeApi([problem(503, 'QUEUE_UNAVAILABLE', 0), problem(503, 'QUEUE_UNAVAILABLE', 0), accepted]);
    expect(await client.jobs.submit(body)).toMatchObject({ id: 'job-1', status: 'queued' });
    expect(seen).toHaveLength(3);
    expect(seen[0]!.key).toMatch(UUID);
    expect(new Set(seen.map((s) => s.key)).size).toBe(1);
    expect(new Set(seen.map((s) => s.body.toString('base64'))).size).toBe(1);
    // A second call is another logical submit: a key of its own.
    await client.jobs.submit(body);
    expect(seen[3]!.key).toMatch(UUID);
    expect(seen[3]!.key).not.toBe(seen[0]!.key);
  });

  it('waits Retry-After before the next try, and sends the caller’s key as given', async () => {
    const { client, seen } = await fakeApi([problem(429, 'QUEUE_FULL', 1), accepted]);
    const startedAt = Date.now();
    await client.jobs.submit(body, { idempotencyKey: 'order-17' });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(950);
    expect(seen.map((s) => s.key)).toEqual(['order-17', 'order-17']);
  });

  it('aborts a try that gets no answer within attemptTimeoutMs and sends it again under the same key', async () => {
    const { client, seen } = await fakeApi([hang, accepted], { submitRetry: { attemptTimeoutMs: 300 } });
    expect(await client.jobs.submit(body)).toMatchObject({ id: 'job-1' });
    expect(seen).toHaveLength(2);
    expect(seen[1]!.key).toBe(seen[0]!.key);
    expect(seen[1]!.body.equals(seen[0]!.body)).toBe(true);
  });

  it('sends again after the connection drops without an answer, and resends a framed body byte for byte', async () => {
    const { client, seen } = await fakeApi([(_res, _n, req) => req.socket.destroy(), problem(502, 'HTTP_ERROR'), accepted], { binaryThresholdBytes: 0 });
    await client.jobs.submit(body);
    expect(seen).toHaveLength(3);
    expect(seen.every((s) => s.contentType === 'application/octet-stream' && s.key === seen[0]!.key && s.body.equals(seen[0]!.body))).toBe(true);
  });

  it.each([
    [409, 'IDEMPOTENCY_CONFLICT'],
    [400, 'VALIDATION_FAILED'],
    [404, 'MODEL_NOT_FOUND'],
    [500, 'INTERNAL'],
  ])('never sends again a %i %s', async (status, code) => {
    const { client, seen } = await fakeApi([problem(status, code), accepted]);
    expect(await rejection(client.jobs.submit(body))).toMatchObject({ status, code });
    expect(seen).toHaveLength(1);
  });

  it('stops after `attempts` tries and throws the last error', async () => {
    const { client, seen } = await fakeApi([(res, n) => problem(503, 'QUEUE_UNAVAILABLE', 0, `try ${n + 1}`)(res)], { submitRetry: { attempts: 3 } });
    const err = await rejection(client.jobs.submit(body));
    expect(err).toBeInstanceOf(InferqError);
    expect(err).toMatchObject({ status: 503, code: 'QUEUE_UNAVAILABLE', detail: 'try 3' });
    expect(seen).toHaveLength(3);
  });

  it('throws at once when the wait asked for would end past maxElapsedMs', async () => {
    const { client, seen } = await fakeApi([problem(429, 'RATE_LIMITED', 60), accepted]);
    const startedAt = Date.now();
    expect(await rejection(client.jobs.submit(body))).toMatchObject({ status: 429, code: 'RATE_LIMITED', retryAfter: 60 });
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    expect(seen).toHaveLength(1);
  });

  it('sends once when retries are off, on the client or on the call, still with a key', async () => {
    const off = await fakeApi([problem(503, 'QUEUE_UNAVAILABLE', 0)], { submitRetry: false });
    expect(await rejection(off.client.jobs.submit(body))).toMatchObject({ status: 503 });
    expect(off.seen).toHaveLength(1);
    expect(off.seen[0]!.key).toMatch(UUID);
    const onCall = createClient({ baseUrl: off.baseUrl, apiKey: 'k' });
    expect(await rejection(onCall.jobs.submit(body, { submitRetry: false }))).toMatchObject({ status: 503 });
    expect(off.seen).toHaveLength(2);
  });

  it("stops on the caller's abort, mid-try, with the abort's reason", async () => {
    const { client, seen } = await fakeApi([hang, accepted]);
    const controller = new AbortController();
    const submitting = client.jobs.submit(body, { signal: controller.signal });
    await expect.poll(() => seen.length).toBe(1);
    const reason = new Error('caller gave up');
    controller.abort(reason);
    expect(await rejection(submitting)).toBe(reason);
    expect(seen).toHaveLength(1);
  });
});

describe('retries of jobs, one and in bulk, create jobs too', () => {
  it('jobs.retry sends a key, the same on each try, and answers the job', async () => {
    const { client, seen } = await fakeApi([problem(503, 'QUEUE_UNAVAILABLE', 0), accepted]);
    expect(await client.jobs.retry('old-job')).toMatchObject({ id: 'job-1' });
    expect(seen).toHaveLength(2);
    expect(seen[0]!.key).toMatch(UUID);
    expect(seen[1]!.key).toBe(seen[0]!.key);
  });

  it('jobs.bulkRetry sends the key as a header, not in the body, and never resends a 409', async () => {
    const counts = { matched: 2, touched: 2, skipped: 0, truncated: false, dryRun: false };
    const { client, seen } = await fakeApi([(_res, _n, req) => req.socket.destroy(), (res) => json(res, 200, counts), problem(409, 'IDEMPOTENCY_CONFLICT')]);
    expect(await client.jobs.bulkRetry({ model: 'mlp' }, { limit: 5, idempotencyKey: 'nightly-1' })).toEqual(counts);
    expect(seen.map((s) => s.key)).toEqual(['nightly-1', 'nightly-1']);
    expect(JSON.parse(seen[1]!.body.toString())).toEqual({ filter: { model: 'mlp' }, limit: 5 });
    expect(await rejection(client.jobs.retry('other', { idempotencyKey: 'nightly-1' }))).toMatchObject({ status: 409 });
    expect(seen).toHaveLength(3);
  });
});

describe('CLI submits', () => {
  const io = () => {
    const out: string[] = [];
    const err: string[] = [];
    const value: Io = { stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), stderrIsTty: false };
    return { out, err, io: value };
  };
  const config = (baseUrl: string) => ({ baseUrl, apiKey: 'k', json: true });

  it('jobs bulk gives each line a key of its own, the same on every try of the line', async () => {
    const { client, seen, baseUrl } = await fakeApi([(res, n) => (n < 2 ? problem(503, 'QUEUE_UNAVAILABLE', 0)(res) : accepted(res))]);
    const dir = await mkdtemp(join(tmpdir(), 'inferq-bulk-retry-'));
    try {
      const line = (i: number) => JSON.stringify({ model: 'mlp', inputs: [{ name: 'x', datatype: 'FP32', shape: [1], data: [i] }] });
      await writeFile(join(dir, 'jobs.jsonl'), `${line(1)}\n${line(2)}\n`);
      const { io: value } = io();
      const code = await jobsBulk.run({ client, config: config(baseUrl), values: { file: join(dir, 'jobs.jsonl'), concurrency: '1' }, args: [], io: value });
      expect(code).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    // Line 1: refused twice, then accepted; line 2: accepted at once.
    expect(seen).toHaveLength(4);
    expect(seen[0]!.key).toMatch(UUID);
    expect([seen[1]!.key, seen[2]!.key]).toEqual([seen[0]!.key, seen[0]!.key]);
    expect(seen[3]!.key).toMatch(UUID);
    expect(seen[3]!.key).not.toBe(seen[0]!.key);
  });

  it('jobs submit names the key to try again with when every try was refused', async () => {
    const { client, seen, baseUrl } = await fakeApi([problem(503, 'QUEUE_UNAVAILABLE', 0)], { submitRetry: { attempts: 2 } });
    const dir = await mkdtemp(join(tmpdir(), 'inferq-submit-retry-'));
    const { err, io: value } = io();
    try {
      await writeFile(join(dir, 'inputs.json'), JSON.stringify([{ name: 'x', datatype: 'FP32', shape: [1], data: [1] }]));
      const run = jobsSubmit.run({
        client,
        config: config(baseUrl),
        values: { model: 'mlp', input: [join(dir, 'inputs.json')] as never },
        args: [],
        io: value,
      });
      expect(await rejection(run)).toMatchObject({ status: 503 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    expect(seen).toHaveLength(2);
    expect(err.join('')).toContain(`--idempotency-key ${seen[0]!.key}`);
  });
});
