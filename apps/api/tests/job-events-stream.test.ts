import { get } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisConnection, createJobEvents } from '@inferq/queue';
import type { JobRecord } from '@inferq/db';
import { ADMIN_KEY, mlpJob, startStack, waitFor, type Stack, type TestProcess } from '@inferq/test-utils';
import Fastify from 'fastify';
import { ProblemSchema } from '@inferq/contracts';
import { jobEventsRoutes } from '../src/routes/job-events.ts';
import { createJobEventStream, type JobEventStream } from '../src/services/jobs/view/job-event-stream.ts';

// GET /v1/jobs/:id/events against the real API and worker: the statuses come
// in order and the stream ends after the terminal one; Last-Event-ID resumes
// without repeats and without losing the terminal event; tenants are kept
// apart; streams end when the client or the server goes away.

interface SseEvent {
  id?: string;
  event?: string;
  data?: string;
}

/** A minimal EventSource over fetch: the parsed events, and whether the server ended the stream. */
async function openStream(baseUrl: string, jobId: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const res = await fetch(`${baseUrl}/v1/jobs/${jobId}/events`, { headers: { authorization: `Bearer ${ADMIN_KEY}`, ...headers }, signal: controller.signal });
  const events: SseEvent[] = [];
  let raw = '';
  let ended = false;
  const done = (async () => {
    if (!res.body) return;
    const decoder = new TextDecoder();
    let buffered = '';
    const reader = res.body.getReader();
    for (;;) {
      const { value, done: over } = await reader.read();
      if (over) break;
      const text = decoder.decode(value, { stream: true });
      raw += text;
      buffered += text;
      let at: number;
      while ((at = buffered.indexOf('\n\n')) >= 0) {
        const block = buffered.slice(0, at);
        buffered = buffered.slice(at + 2);
        const e: SseEvent = {};
        for (const line of block.split('\n')) {
          const [, field, value] = /^([a-z]+): ?(.*)$/.exec(line) ?? [];
          if (field === 'id' || field === 'event' || field === 'data') e[field] = value;
        }
        if (e.event) events.push(e);
      }
    }
    ended = true;
  })().catch(() => {});
  const statuses = () => events.map((e) => JSON.parse(e.data!).status as string);
  return {
    res,
    events,
    statuses,
    done,
    raw: () => raw,
    ended: () => ended,
    close: () => controller.abort(),
    /** Resolves once the stream has sent `status` (and returns that event). */
    waitForStatus: (status: string) =>
      waitFor(() => events.find((e) => JSON.parse(e.data!).status === status), { timeoutMs: 15_000, what: `a ${status} event` }),
  };
}

let stack: Stack;
let worker: TestProcess | undefined;
const statusOf = async (id: string) => (await stack.ctx.pool.query<{ status: string }>('SELECT status FROM jobs WHERE id = $1', [id])).rows[0]!.status;
const submit = async (): Promise<string> => {
  const res = await stack.request('POST', '/v1/jobs', mlpJob(Math.random()));
  expect(res.status).toBe(202);
  return res.json.id;
};

beforeAll(async () => {
  // No worker yet: jobs stay queued until a test starts one.
  stack = await startStack();
  await stack.registerModel('mlp', { maxBatchSize: '8', maxBatchDelayMs: '2' });
});
afterAll(async () => {
  await stack?.close();
});

describe('GET /v1/jobs/:id/events', () => {
  it("answers 404 JOB_NOT_FOUND for another tenant's job, before any stream starts", async () => {
    const id = await submit();
    const other = await stack.request('POST', '/v1/keys', { name: 'tenant-b', scopes: ['jobs:read'] });
    expect(other.status).toBe(201);
    for (const [key, jobId] of [
      [other.json.secret, id],
      [ADMIN_KEY, crypto.randomUUID()],
    ] as const) {
      const res = await fetch(`${stack.baseUrl}/v1/jobs/${jobId}/events`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect((await res.json()).code).toBe('JOB_NOT_FOUND');
    }
    const bad = await fetch(`${stack.baseUrl}/v1/jobs/${id}/events`, { headers: { authorization: `Bearer ${ADMIN_KEY}`, 'last-event-id': 'abc' } });
    expect(bad.status).toBe(400);
  });

  it('ends with canceled when a queued job is canceled', async () => {
    const id = await submit();
    const stream = await openStream(stack.baseUrl, id);
    expect(stream.res.status).toBe(200);
    expect(stream.res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    await stream.waitForStatus('queued');
    expect((await stack.request('POST', `/v1/jobs/${id}/cancel`)).status).toBe(200);
    await stream.done;
    expect(stream.ended()).toBe(true);
    expect(stream.statuses()).toEqual(['queued', 'canceled']);
    expect(stream.events.map((e) => e.event)).toEqual(['status', 'status']);
    expect(Number(stream.events[1]!.id)).toBeGreaterThan(Number(stream.events[0]!.id));
    expect(stream.raw()).toMatch(/^retry: \d+\n\n/);
  });

  let finished: { id: string; queuedId: string; runningId: string; succeededId: string };
  it('sends queued, running, succeeded in order and ends; a reconnect after running gets only the rest', async () => {
    const id = await submit();
    const live = await openStream(stack.baseUrl, id);
    const queued = await live.waitForStatus('queued');

    // Hold the job at `running`, however quick the batch: lock its row so the worker's claim waits, queue a
    // second lock behind that claim, then let the claim through. The second lock is granted once the row
    // is `running`, and the worker's result write waits for it.
    const first = await stack.ctx.pool.connect();
    const second = await stack.ctx.pool.connect();
    try {
      const pidOf = async (c: typeof first) => (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      /** Backends waiting for `pid`'s locks. */
      const blockedBy = async (pid: number) =>
        (await stack.ctx.pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [pid])).rows.map((r) => r.pid);
      const [firstPid, secondPid] = [await pidOf(first), await pidOf(second)];
      await first.query('BEGIN');
      await first.query('SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE', [id]);
      // The running mark written at the claim (WORKER_RUNNING_MARK_MS=0), so the statement that waits is the mark, never the result write.
      worker = await stack.startWorker({ WORKER_RUNNING_MARK_MS: '0' });
      const [claimPid] = await waitFor(
        async () => {
          const pids = await blockedBy(firstPid);
          return pids.length === 1 ? pids : undefined;
        },
        { what: "the worker's claim to wait for the row" },
      );
      await second.query('BEGIN');
      const held = second.query<{ status: string }>('SELECT status FROM jobs WHERE id = $1 FOR UPDATE', [id]);
      await waitFor(async () => (await blockedBy(claimPid!)).includes(secondPid) || (await blockedBy(firstPid)).includes(secondPid), {
        what: 'the second lock to queue behind the claim',
      });
      await first.query('COMMIT');
      expect((await held).rows[0]!.status).toBe('running');
      const running = await live.waitForStatus('running');

      // A client that saw `running` reconnects while the job still runs.
      const resumed = await openStream(stack.baseUrl, id, { 'last-event-id': running.id! });
      expect(resumed.res.status).toBe(200);
      await second.query('COMMIT');
      await Promise.all([live.done, resumed.done]);
      expect(live.statuses()).toEqual(['queued', 'running', 'succeeded']);
      expect(live.ended()).toBe(true);
      expect(resumed.statuses()).toEqual(['succeeded']);
      expect(resumed.ended()).toBe(true);
      const ids = live.events.map((e) => Number(e.id));
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(resumed.events[0]!.id).toBe(live.events[2]!.id);
      expect(JSON.parse(live.events[2]!.data!)).toEqual({ id, status: 'succeeded', attempts: 1 });
      finished = { id, queuedId: queued.id!, runningId: running.id!, succeededId: live.events[2]!.id! };
    } finally {
      await first.query('ROLLBACK').catch(() => {});
      await second.query('ROLLBACK').catch(() => {});
      first.release();
      second.release();
    }
  });

  it("sends a finished job's terminal event and ends at once; after the terminal event a reconnect is 204", async () => {
    const whole = await openStream(stack.baseUrl, finished.id);
    await whole.done;
    expect(whole.statuses()).toEqual(['succeeded']);
    expect(whole.ended()).toBe(true);

    // A client that missed `running` still gets the terminal event, and only it.
    const late = await openStream(stack.baseUrl, finished.id, { 'last-event-id': finished.queuedId });
    await late.done;
    expect(late.statuses()).toEqual(['succeeded']);

    const after = await fetch(`${stack.baseUrl}/v1/jobs/${finished.id}/events`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'last-event-id': finished.succeededId },
    });
    expect(after.status).toBe(204);
  });

  it('ends when the server closes, and the server does not wait for the stream', async () => {
    // A job left queued (no worker now), streamed from an API replica that is then stopped.
    await worker?.stop('SIGKILL');
    worker = undefined;
    const id = await submit();
    const replica = await stack.startApi();
    const stream = await openStream(replica.baseUrl, id);
    await stream.waitForStatus('queued');
    // A client that goes away first (node:http: undici's fetch keeps a spare connection open, which would hold the shutdown).
    await new Promise<void>((resolve, reject) => {
      const req = get(`${replica.baseUrl}/v1/jobs/${id}/events`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      }).on('error', reject);
    });
    const started = Date.now();
    expect(await replica.process.stop('SIGTERM')).toBe(0);
    await stream.done;
    expect(stream.ended()).toBe(true);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('is in the OpenAPI document as a text/event-stream with its event format', async () => {
    const doc = (await (await fetch(`${stack.baseUrl}/docs/json`)).json()) as any;
    const op = doc.paths['/v1/jobs/{id}/events'].get;
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '204', '404']));
    expect(Object.keys(op.responses['200'].content)).toEqual(['text/event-stream']);
    expect(op.description).toContain('event: status');
    expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['id', 'last-event-id']));
  });
});

describe('job event stream service', () => {
  it('leaves no watch behind when the client goes away, and sends nothing at or below Last-Event-ID', async () => {
    const redis = createRedisConnection(stack.ctx.env.REDIS_URL!, 'producer');
    const events = createJobEvents({ connection: redis, prefix: stack.ctx.prefix });
    try {
      const job = { id: crypto.randomUUID(), modelName: 'mlp', status: 'queued', attempts: 0, errorCode: null, errorMessage: null } as JobRecord;
      const stream = createJobEventStream({ events, getJob: async () => job, pollIntervalMs: 20 });
      const controller = new AbortController();
      const iterator = stream({ job, ownerKeyId: null, signal: controller.signal });
      expect((await iterator.next()).value).toMatchObject({ eventId: 1, data: { status: 'queued', attempts: 0 } });
      const next = iterator.next();
      expect(events.watchCount()).toBe(1);
      controller.abort();
      expect((await next).done).toBe(true);
      expect(events.watchCount()).toBe(0);

      // Resumed past the current status: nothing until the job moves on.
      const resumed = stream({ job, ownerKeyId: null, lastEventId: 1, signal: AbortSignal.timeout(200) });
      expect((await resumed.next()).done).toBe(true);
      expect(events.watchCount()).toBe(0);
    } finally {
      await events.close();
      await redis.quit();
    }
  });

  it('sends keep-alive comments on a quiet stream, and stops the job stream when the client goes away', async () => {
    const job = { id: crypto.randomUUID(), modelName: 'mlp', status: 'queued', attempts: 0, errorCode: null, errorMessage: null } as JobRecord;
    let clientGone: (() => void) | undefined;
    const stopped = new Promise<void>((resolve) => {
      clientGone = resolve;
    });
    const streamJobEvents: JobEventStream = async function* ({ signal }) {
      yield { eventId: 1, data: { id: job.id, status: 'queued', attempts: 0 } };
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      clientGone!();
    };
    const app = Fastify();
    app.addSchema(ProblemSchema);
    app.addHook('onRequest', async (request) => {
      (request as unknown as { principal: unknown }).principal = { keyId: 'k', isAdmin: true };
    });
    await app.register(jobEventsRoutes, { jobs: { getJob: async () => job }, streamJobEvents, heartbeatIntervalMs: 20 });
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const text = await new Promise<string>((resolve, reject) => {
        let got = '';
        const req = get(`${address}/v1/jobs/${job.id}/events`, (res) => {
          res.on('data', (chunk: Buffer) => {
            got += chunk.toString();
            if ((got.match(/: keep-alive\n\n/g) ?? []).length >= 2) {
              req.destroy();
              resolve(got);
            }
          });
        }).on('error', reject);
      });
      expect(text).toMatch(/^retry: \d+\n\nid: 1\nevent: status\ndata: \{"id":"[^"]+","status":"queued","attempts":0\}\n\n(: keep-alive\n\n){2}/);
      await stopped;
    } finally {
      await app.close();
    }
  });
});
