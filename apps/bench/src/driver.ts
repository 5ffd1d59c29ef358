import { Pool as HttpPool } from 'undici';
import type { Pool } from '@inferq/db';
import type { Priority } from '@inferq/contracts';
import { readFile } from 'node:fs/promises';
import { ADMIN_KEY, demoModel, mlpRows, waitFor, type Stack, type TestProcess } from '@inferq/test-utils';
import { cpuStopwatch } from './costs/process-cpu.ts';
import { meterTiers, type TierCosts } from './costs/tier-costs.ts';

export interface SubmitRun {
  ids: string[];
  /** Request body bytes sent in answered submits. */
  bodyBytes: number;
  /** Milliseconds per request, in completion order. */
  latenciesMs: number[];
  elapsedS: number;
  /** Submits refused in a way the caller said to expect (`Refusal`), not sent again. */
  refused: number;
}

/** A refusal the caller expects (a deadline that passed before the API read the request): counted, not thrown. */
export type Refusal = (status: number, code: string | undefined) => boolean;

/** A submit body in its wire form, sent as is with its own headers (a framed binary submit, or JSON serialised once). */
export class EncodedBody {
  constructor(
    readonly bytes: Buffer,
    readonly headers: Record<string, string>,
  ) {}
}

/** `body` in its wire form: as is when already encoded, else as JSON. */
export const wireBody = (body: unknown): EncodedBody =>
  body instanceof EncodedBody ? body : new EncodedBody(Buffer.from(JSON.stringify(body)), { 'content-type': 'application/json' });

/** How a submit carries its tensor bytes: JSON with base64 `data`, or the framed binary body (Inference-Header-Content-Length). */
export type BodyForm = 'json' | 'binary';
export const BODY_FORMS: readonly BodyForm[] = ['json', 'binary'];

/** One HTTP client submitting jobs; records each 202's id and latency. */
function createSubmitter(baseUrl: string, count: number, connections: number, body: (i: number) => unknown, apiKey = ADMIN_KEY, expected?: Refusal) {
  const http = new HttpPool(baseUrl, { connections, pipelining: 1 });
  const auth = { authorization: `Bearer ${apiKey}` };
  const ids: string[] = new Array(count);
  const latenciesMs: number[] = [];
  let bodyBytes = 0;
  let refused = 0;
  const started = performance.now();
  // Scenarios mostly send one body object over and over: encode it once,
  // so the load generator spends its share of the cores on sending, not on
  // escaping the same 16 KiB of base64 for every request.
  let lastBody: unknown;
  let lastEncoded = wireBody({});
  const encode = (b: unknown): EncodedBody => (b === lastBody ? lastEncoded : ((lastBody = b), (lastEncoded = wireBody(b))));
  return {
    async send(i: number): Promise<void> {
      const t0 = performance.now();
      const encoded = encode(body(i));
      const res = await http.request({ path: '/v1/jobs', method: 'POST', headers: { ...auth, ...encoded.headers }, body: encoded.bytes });
      const json = (await res.body.json()) as { id?: string; code?: string };
      if (res.statusCode !== 202 && expected?.(res.statusCode, json.code)) return void refused++;
      if (res.statusCode !== 202) throw new Error(`submit answered ${res.statusCode} ${json.code ?? ''}`);
      latenciesMs.push(performance.now() - t0);
      bodyBytes += encoded.bytes.byteLength;
      ids[i] = json.id!;
    },
    /** What was sent so far, timed from the submitter's start to now. */
    result: (): SubmitRun => ({ ids, bodyBytes, latenciesMs, elapsedS: (performance.now() - started) / 1000, refused }),
    close: () => http.close(),
  };
}

/**
 * Submits `count` jobs over HTTP keep-alive with `concurrency` requests in
 * flight, from this process (the API and workers are other processes).
 */
export async function submitJobs(baseUrl: string, count: number, concurrency: number, body: (i: number) => unknown, apiKey?: string): Promise<SubmitRun> {
  const submitter = createSubmitter(baseUrl, count, concurrency, body, apiKey);
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: Math.min(concurrency, count) }, async () => {
        while (next < count) await submitter.send(next++);
      }),
    );
    return submitter.result();
  } finally {
    await submitter.close();
  }
}

/** Waits until `count` jobs of the schema are finished; returns when the last one finished. */
/**
 * Polls every 500 ms: the count scans every finished row (8 ms at 20,000 on two cores), and polled every 100 ms it was
 * 14 % of Postgres's CPU in a drain, charged to the Postgres tier. Spans come from the rows' timestamps, not from here.
 */
export async function waitForFinished(pool: Pool, count: number, timeoutMs = 600_000): Promise<void> {
  await waitFor(
    async () => {
      const { rows } = await pool.query("SELECT count(*)::int AS n FROM jobs WHERE status IN ('succeeded', 'failed', 'canceled', 'expired')");
      return rows[0].n >= count;
    },
    { timeoutMs, intervalMs: 500, what: `${count} jobs to finish` },
  );
}

/**
 * Waits until no job is queued or running: a drain's end, where every job was submitted before it began. Asked
 * through the partial index of unfinished jobs, so the wait costs Postgres next to nothing; counting the finished
 * rows (waitForFinished) scans them all, every half second, and put 20–35 µs a job of the harness's own work into a
 * 20,000-job drain's Postgres figure.
 */
export async function waitForDrained(pool: Pool, what: string, timeoutMs = 600_000): Promise<void> {
  await waitFor(
    async () => {
      const { rows } = await pool.query("SELECT NOT EXISTS (SELECT 1 FROM jobs WHERE status IN ('queued', 'running')) AS drained");
      return rows[0].drained === true;
    },
    { timeoutMs, intervalMs: 500, what },
  );
}

/**
 * Empties the jobs table for the next run: a TRUNCATE, which leaves no dead
 * rows behind. A DELETE of a run's rows left them for autovacuum, which then
 * cleaned them during the next run and put its CPU into that run's figures
 * (~2 ms of Postgres CPU a job in a drain after six 30,000-job rounds).
 */
export async function emptyJobs(pool: Pool): Promise<void> {
  await pool.query('TRUNCATE jobs CASCADE');
}

/** Seconds from the first job created to the last one finished, and the finished jobs' timings. */
export async function finishedSpan(pool: Pool): Promise<{ spanS: number; queueMs: number[]; inferMs: number[]; batchSizes: number[]; failed: number }> {
  const {
    rows: [span],
  } = await pool.query(
    "SELECT extract(epoch FROM max(finished_at) - min(created_at))::float AS s, count(*) FILTER (WHERE status = 'failed')::int AS failed FROM jobs",
  );
  const { rows } = await pool.query("SELECT queue_ms, infer_ms, batch_size FROM jobs WHERE status = 'succeeded'");
  return {
    spanS: span.s ?? 0,
    failed: span.failed,
    queueMs: rows.map((r) => r.queue_ms as number),
    inferMs: rows.map((r) => r.infer_ms as number),
    batchSizes: rows.map((r) => r.batch_size as number),
  };
}

/**
 * Worker timers as shipped, over the tests' fast ones (reconcile every 500 ms,
 * 3 s locks, stalled checks every second), which no deployment runs.
 */
export const SHIPPED_WORKER_ENV = {
  WORKER_LOCK_DURATION_MS: '30000',
  WORKER_STALLED_INTERVAL_MS: '30000',
  MODEL_REFRESH_INTERVAL_MS: '5000',
  RECONCILE_INTERVAL_MS: '10000',
  RECONCILE_MIN_AGE_MS: '10000',
  HEARTBEAT_INTERVAL_MS: '5000',
};

/**
 * A job body of one FP32 tensor in `form`: JSON with the bytes as base64 (the
 * fast JSON path), or framed (the JSON header, then the raw bytes); `fields`
 * go beside `model` (e.g. priority). Every job carries the same bytes.
 */
export function tensorBody(
  form: BodyForm,
  model: string,
  input: string,
  shape: number[],
  values: Float32Array,
  fields: Record<string, unknown> = {},
): () => unknown {
  const bytes = Buffer.from(values.buffer, values.byteOffset, values.byteLength);
  const tensor = { name: input, datatype: 'FP32', shape };
  if (form === 'json') {
    const body = { model, ...fields, inputs: [{ ...tensor, data: bytes.toString('base64') }] };
    return () => body;
  }
  const header = Buffer.from(JSON.stringify({ model, ...fields, inputs: [{ ...tensor, parameters: { binary_data_size: bytes.byteLength } }] }));
  const headers = { 'content-type': 'application/octet-stream', 'inference-header-content-length': String(header.byteLength) };
  const body = new EncodedBody(Buffer.concat([header, bytes]), headers);
  return () => body;
}

/** A job body of one FP32 tensor sent as base64 (the fast JSON path); every job carries the same bytes. */
export const base64Body = (model: string, input: string, shape: number[], values: Float32Array): (() => unknown) =>
  tensorBody('json', model, input, shape, values);

/**
 * Submits `count` jobs at a steady `ratePerS`, open loop: a slow answer never
 * delays the next send, so queue waits show what a client at that rate sees.
 */
export async function submitJobsAtRate(
  baseUrl: string,
  count: number,
  ratePerS: number,
  body: (i: number) => unknown,
  apiKey?: string,
  expected?: Refusal,
): Promise<SubmitRun> {
  const submitter = createSubmitter(baseUrl, count, 64, body, apiKey, expected);
  const started = performance.now();
  const sends: Array<Promise<void>> = [];
  try {
    for (let i = 0; i < count; i++) {
      const waitMs = started + (i * 1000) / ratePerS - performance.now();
      if (waitMs > 0) await new Promise((r) => setTimeout(r, waitMs));
      sends.push(submitter.send(i));
    }
    await Promise.all(sends);
    return submitter.result();
  } finally {
    await Promise.allSettled(sends);
    await submitter.close();
  }
}

export interface JobsRun {
  jobs: number;
  /** First created_at to last finished_at. */
  spanS: number;
  jobsPerS: number;
  /** Jobs per batch, averaged over batches. */
  avgBatchSize: number | null;
  failed: number;
  /** Per succeeded job: queue wait plus its batch's inference time. */
  latenciesMs: number[];
  submit: SubmitRun;
  /** CPU seconds the (first) API process used while the jobs were submitted; null off Linux. */
  apiCpuS: number | null;
  /** What the run cost per job, tier by tier, from the first submit to the last job seen finished. */
  costs: TierCosts;
}

/** The processes a run's tier costs cover beside the stack's API: its workers, and their session's intra-op threads. */
export interface RunTiers {
  workers?: TestProcess[];
  /** @default 1 */
  sessionCores?: number;
}

/** The stack's API, `tiers.workers`, its Redis and Postgres, and this process as the load generator. */
export const meterStack = (stack: Stack, tiers: RunTiers = {}) =>
  meterTiers({
    apiPids: [stack.api.child.pid!],
    workerPids: (tiers.workers ?? []).map((w) => w.child.pid!),
    redisUrl: stack.ctx.env.REDIS_URL,
    pool: stack.ctx.pool,
    sessionCores: tiers.sessionCores,
  });

/**
 * Runs `submit` (which sends `count` jobs), waits until all are finished and
 * reads their timings, then empties the jobs table so the next run on the
 * same stack starts clean.
 */
export async function measureJobs(stack: Stack, count: number, submit: () => Promise<SubmitRun>, tiers?: RunTiers): Promise<JobsRun> {
  const meter = await meterStack(stack, tiers);
  const apiCpu = cpuStopwatch(stack.api.child.pid);
  const sent = await submit();
  const apiCpuS = apiCpu.stop();
  await waitForFinished(stack.ctx.pool, count);
  const costs = await meter.stop(count);
  const span = await finishedSpan(stack.ctx.pool);
  await emptyJobs(stack.ctx.pool);
  return {
    jobs: count,
    spanS: span.spanS,
    jobsPerS: count / span.spanS,
    // A batch of b jobs has b rows, each 1/b of it: the sum counts the batches.
    avgBatchSize: span.batchSizes.length === 0 ? null : span.batchSizes.length / span.batchSizes.reduce((a, b) => a + 1 / b, 0),
    failed: span.failed,
    latenciesMs: span.queueMs.map((q, i) => q + span.inferMs[i]!),
    submit: sent,
    apiCpuS,
    costs,
  };
}

/** `count` jobs at saturating load: `concurrency` requests in flight. */
export const runBurst = (stack: Stack, count: number, concurrency: number, body: (i: number) => unknown, tiers?: RunTiers): Promise<JobsRun> =>
  measureJobs(stack, count, () => submitJobs(stack.baseUrl, count, concurrency, body), tiers);

/** A submit body of one MLP job: one [1, 64] FP32 row as base64 (or framed, in `form`), at `priority`. */
export function mlpJobBody(priority: Priority, form: BodyForm = 'json'): object {
  return tensorBody(form, 'mlp', 'features', [1, 64], mlpRows(1, 1), { priority })() as object;
}

/** Registers demo model `file` under `name` with these upload fields (each batching setting is a model of its own). */
export async function registerModelAs(stack: Stack, name: string, file: string, fields: Record<string, string>): Promise<void> {
  const form = new FormData();
  form.set('name', name);
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  form.set('file', new Blob([await readFile(demoModel(file).path)]), `${name}.onnx`);
  const res = await fetch(`${stack.baseUrl}/v1/models`, { method: 'POST', body: form, headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  if (res.status !== 201) throw new Error(`model upload failed: ${res.status} ${await res.text()}`);
}

/**
 * Waits until a worker's heartbeat (GET /v1/workers) lists `model` as loaded — the worker with `pid` when given —
 * and returns the execution provider its session ended on.
 */
export async function waitForLoadedModel(stack: Stack, model: string, o: { pid?: number; timeoutMs?: number } = {}): Promise<string> {
  let provider: string | undefined;
  await waitFor(
    async () => {
      const { items } = (await stack.request('GET', '/v1/workers')).json as {
        items: Array<{ pid: number; modelsLoaded: Array<{ model: string; provider: string }> }>;
      };
      provider = items
        .filter((w) => o.pid === undefined || w.pid === o.pid)
        .flatMap((w) => w.modelsLoaded)
        .find((m) => m.model === model)?.provider;
      return provider !== undefined;
    },
    { timeoutMs: o.timeoutMs ?? 60_000, intervalMs: 100, what: `a worker to report ${model} loaded` },
  );
  return provider!;
}
