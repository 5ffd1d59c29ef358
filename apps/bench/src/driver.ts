import { Pool as HttpPool } from 'undici';
import type { Pool } from '@inferq/db';
import { readFile } from 'node:fs/promises';
import { ADMIN_KEY, demoModel, mlpRows, waitFor, type Stack } from '@inferq/test-utils';

export interface SubmitRun {
  ids: string[];
  /** Milliseconds per request, in completion order. */
  latenciesMs: number[];
  elapsedS: number;
}

/** One HTTP client submitting jobs; records each 202's id and latency. */
function createSubmitter(baseUrl: string, count: number, connections: number, body: (i: number) => unknown, apiKey = ADMIN_KEY) {
  const http = new HttpPool(baseUrl, { connections, pipelining: 1 });
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const ids: string[] = new Array(count);
  const latenciesMs: number[] = [];
  const started = performance.now();
  // Scenarios mostly send one body object over and over: serialise it once,
  // so the load generator spends its share of the cores on sending, not on
  // escaping the same 16 KiB of base64 for every request.
  let lastBody: unknown;
  let lastJson = '';
  const serialise = (b: unknown): string => (b === lastBody ? lastJson : ((lastBody = b), (lastJson = JSON.stringify(b))));
  return {
    async send(i: number): Promise<void> {
      const t0 = performance.now();
      const res = await http.request({ path: '/v1/jobs', method: 'POST', headers, body: serialise(body(i)) });
      const json = (await res.body.json()) as { id?: string; code?: string };
      if (res.statusCode !== 202) throw new Error(`submit answered ${res.statusCode} ${json.code ?? ''}`);
      latenciesMs.push(performance.now() - t0);
      ids[i] = json.id!;
    },
    /** What was sent so far, timed from the submitter's start to now. */
    result: (): SubmitRun => ({ ids, latenciesMs, elapsedS: (performance.now() - started) / 1000 }),
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
export async function waitForFinished(pool: Pool, count: number, timeoutMs = 600_000): Promise<void> {
  await waitFor(
    async () => {
      const { rows } = await pool.query("SELECT count(*)::int AS n FROM jobs WHERE status IN ('succeeded', 'failed', 'canceled', 'expired')");
      return rows[0].n >= count;
    },
    { timeoutMs, intervalMs: 100, what: `${count} jobs to finish` },
  );
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

/** A job body of one FP32 tensor sent as base64 (the fast path); every job carries the same bytes. */
export function base64Body(model: string, input: string, shape: number[], values: Float32Array): () => unknown {
  const data = Buffer.from(values.buffer, values.byteOffset, values.byteLength).toString('base64');
  const body = { model, inputs: [{ name: input, datatype: 'FP32', shape, data }] };
  return () => body;
}

/**
 * Submits `count` jobs at a steady `ratePerS`, open loop: a slow answer never
 * delays the next send, so queue waits show what a client at that rate sees.
 */
export async function submitJobsAtRate(baseUrl: string, count: number, ratePerS: number, body: (i: number) => unknown, apiKey?: string): Promise<SubmitRun> {
  const submitter = createSubmitter(baseUrl, count, 64, body, apiKey);
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
}

/**
 * Runs `submit` (which sends `count` jobs), waits until all are finished and
 * reads their timings, then empties the jobs table so the next run on the
 * same stack starts clean.
 */
export async function measureJobs(stack: Stack, count: number, submit: () => Promise<SubmitRun>): Promise<JobsRun> {
  const sent = await submit();
  await waitForFinished(stack.ctx.pool, count);
  const span = await finishedSpan(stack.ctx.pool);
  await stack.ctx.pool.query('DELETE FROM jobs');
  return {
    jobs: count,
    spanS: span.spanS,
    jobsPerS: count / span.spanS,
    // A batch of b jobs has b rows, each 1/b of it: the sum counts the batches.
    avgBatchSize: span.batchSizes.length === 0 ? null : span.batchSizes.length / span.batchSizes.reduce((a, b) => a + 1 / b, 0),
    failed: span.failed,
    latenciesMs: span.queueMs.map((q, i) => q + span.inferMs[i]!),
    submit: sent,
  };
}

/** `count` jobs at saturating load: `concurrency` requests in flight. */
export const runBurst = (stack: Stack, count: number, concurrency: number, body: (i: number) => unknown): Promise<JobsRun> =>
  measureJobs(stack, count, () => submitJobs(stack.baseUrl, count, concurrency, body));

/** A submit body of one MLP job: one [1, 64] FP32 row as base64, at `priority`. */
export function mlpJobBody(priority: 'high' | 'normal' | 'low'): object {
  const data = Buffer.from(mlpRows(1, 1).buffer).toString('base64');
  return { model: 'mlp', priority, inputs: [{ name: 'features', datatype: 'FP32', shape: [1, 64], data }] };
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
