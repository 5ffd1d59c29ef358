import { createWriteStream, openAsBlob } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import type { Pool } from '@inferq/db';
import { ADMIN_KEY, mlpRows, waitFor, type Stack } from '@inferq/test-utils';
import { emptyJobs, mlpJobBody, SHIPPED_WORKER_ENV, submitJobs, submitJobsAtRate, waitForFinished } from '../driver.ts';
import { loadBenchEnv } from '../bench-env.ts';
import { processCpuSeconds } from '../costs/process-cpu.ts';
import { goal, type Scenario } from '../scenario.ts';
import { percentile, round } from '../stats.ts';

// The Batch API at size: a file of MLP requests uploaded, batched and run
// while interactive jobs keep coming, against the same worker's drain of the
// same jobs with nothing else to do.

const MAX_BATCH_SIZE = 64;
const MAX_BATCH_DELAY_MS = 2;
const INTERACTIVE_PER_S = 20;
const auth = { authorization: `Bearer ${ADMIN_KEY}` };

/** A process's resident memory in MiB (Linux), or null. */
async function rssMiB(pid: number | undefined): Promise<number | null> {
  if (pid === undefined) return null;
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  return kb === undefined ? null : Number(kb) / 1024;
}

/** A process's CPU seconds so far; null off Linux or without a pid. */
const cpuS = (pid: number | undefined) => (pid === undefined ? null : processCpuSeconds(pid));
/** CPU µs a line between two readings (seconds). */
const perLineUs = (before: number | null, after: number | null, lines: number) =>
  before === null || after === null ? null : round(((after - before) * 1e6) / lines, 0);

/** Samples the processes' RSS every second until stopped; their maxima and first readings. */
function sampleRss(pids: Record<string, number | undefined>) {
  const seen: Record<string, { first: number | null; max: number | null }> = {};
  const take = async () => {
    for (const [name, pid] of Object.entries(pids)) {
      const mib = await rssMiB(pid);
      const s = (seen[name] ??= { first: mib, max: mib });
      if (mib !== null) s.max = Math.max(s.max ?? 0, mib);
    }
  };
  void take();
  const timer = setInterval(() => void take(), 1_000);
  return {
    stop: async () => {
      clearInterval(timer);
      await take();
      return seen;
    },
  };
}

interface Latencies {
  /** Created to finished (ms), each succeeded job. */
  total: number[];
  /** Created to claimed by a worker (started_at): its submit's commit, its wait in the queue and in the worker's batcher. */
  wait: number[];
  /** Each submit's HTTP request to its 202 (ms): the API's handling before the row, which `total` leaves out. */
  submit: number[];
  /** The interactive API's event-loop delay over the stream (loopDelay). */
  loop: { p99: number | null; max: number | null };
}

/** What a stream that did not run measured. */
const NO_LATENCIES: Latencies = { total: [], wait: [], submit: [], loop: { p99: null, max: null } };

/** The latencies of the succeeded jobs of a priority created in [from, to). */
async function latencies(pool: Pool, priority: string, from: Date, to: Date): Promise<Latencies> {
  const { rows } = await pool.query<{ ms: number; wait_ms: number }>(
    `SELECT extract(epoch FROM finished_at - created_at) * 1000 AS ms, extract(epoch FROM started_at - created_at) * 1000 AS wait_ms FROM jobs
      WHERE priority = $1 AND status = 'succeeded' AND created_at >= $2 AND created_at < $3`,
    [priority, from, to],
  );
  return { total: rows.map((r) => Number(r.ms)), wait: rows.map((r) => Number(r.wait_ms)), submit: [], loop: { p99: null, max: null } };
}

/** Writes `lines` MLP requests to a JSONL file, streamed; its path and size. */
async function writeRequests(dir: string, lines: number): Promise<{ path: string; bytes: number }> {
  const path = join(dir, 'requests.jsonl');
  const out = createWriteStream(path);
  const data = Buffer.from(mlpRows(1, 1).buffer).toString('base64');
  let bytes = 0;
  for (let i = 0; i < lines; i++) {
    const body = { model: 'mlp', inputs: [{ name: 'features', datatype: 'FP32', shape: [1, 64], data }] };
    const line = `${JSON.stringify({ custom_id: `row-${i}`, method: 'POST', url: '/v1/jobs', body })}\n`;
    bytes += line.length;
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return { path, bytes };
}

/**
 * The interactive API's event-loop delay (ms, p99 and most) since the last call: prom-client resets its histogram at
 * each scrape, so a call before a stretch and one after it read that stretch alone.
 */
async function loopDelay(baseUrl: string): Promise<{ p99: number | null; max: number | null }> {
  const text = await (await fetch(`${baseUrl}/metrics`, { headers: auth })).text();
  const read = (name: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`inferq_api_nodejs_eventloop_lag_${name}_seconds `));
    return line === undefined ? null : round(Number(line.split(' ')[1]) * 1000, 1);
  };
  return { p99: read('p99'), max: read('max') };
}

async function json<T>(res: Response): Promise<T> {
  if (!res.ok) throw new Error(`${res.url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** The interactive stream: `count` normal jobs at INTERACTIVE_PER_S; their latencies once all have finished. */
async function interactive(stack: Stack, count: number): Promise<Latencies> {
  const from = (await stack.ctx.pool.query<{ now: Date }>('SELECT now()')).rows[0]!.now;
  await loopDelay(stack.baseUrl);
  const { latenciesMs } = await submitJobsAtRate(stack.baseUrl, count, INTERACTIVE_PER_S, () => mlpJobBody('normal'));
  const loop = await loopDelay(stack.baseUrl);
  const to = (await stack.ctx.pool.query<{ now: Date }>('SELECT now()')).rows[0]!.now;
  await waitFor(async () => (await latencies(stack.ctx.pool, 'normal', from, to)).total.length >= count, { timeoutMs: 600_000, intervalMs: 500 });
  return { ...(await latencies(stack.ctx.pool, 'normal', from, to)), submit: latenciesMs, loop };
}

export const batchApi: Scenario = {
  id: '14',
  title: 'The Batch API: a million-line batch beside interactive traffic',
  async run(ctx) {
    // BENCH_BATCH_LINES: a smaller file than the million, for a quicker look. BENCH_BATCH_API=shared: the batch runs on
    // the API that takes the interactive traffic, as a deployment of one API does.
    const env = loadBenchEnv();
    const lines = Number(env.BENCH_BATCH_LINES) || ctx.size(1_000_000, 300);
    const shared = env.BENCH_BATCH_API === 'shared';
    const drainJobs = ctx.size(100_000, 300);
    const interactiveJobs = INTERACTIVE_PER_S * ctx.size(30, 2);
    // The deployment docs/operations.md advises: the API that takes interactive traffic runs no batches
    // (BATCH_RUNNERS=0), a second one does, so a batch's submits do not queue on the interactive event loop.
    const stack = await ctx.startStack({ BATCH_JOBS_IN_FLIGHT: '10000', BATCH_RUNNERS: shared ? '2' : '0' });
    const batchSide = shared ? { baseUrl: stack.baseUrl, process: stack.api } : await stack.startApi({ BATCH_RUNNERS: '2' });
    const dir = await mkdtemp(join(tmpdir(), 'inferq-batch-bench-'));
    try {
      const { pool } = stack.ctx;
      await stack.registerModel('mlp', { maxBatchSize: String(MAX_BATCH_SIZE), maxBatchDelayMs: String(MAX_BATCH_DELAY_MS) });
      const worker = await stack.startWorker({ ...SHIPPED_WORKER_ENV, INTRA_OP_THREADS: '1', WORKER_MODELS: 'mlp' });
      await stack.waitUntilServed('mlp');

      // Interactive latency with nothing else running, once the worker is warm (its first batches are slow).
      await submitJobs(stack.baseUrl, ctx.size(2_000, 50), 64, () => mlpJobBody('normal'));
      await waitForFinished(pool, ctx.size(2_000, 50));
      const idle = await interactive(stack, interactiveJobs);
      // The ceiling: the worker-side drain of the same jobs, queued while the queue is paused.
      await emptyJobs(pool);
      await json(await fetch(`${stack.baseUrl}/v1/models/mlp/pause`, { method: 'POST', headers: auth }));
      await submitJobs(stack.baseUrl, drainJobs, 128, () => mlpJobBody('batch'));
      const resumed = Date.now();
      await json(await fetch(`${stack.baseUrl}/v1/models/mlp/resume`, { method: 'POST', headers: auth }));
      await waitForFinished(pool, drainJobs, 3_600_000);
      const drainPerS = drainJobs / (((await pool.query<{ at: Date }>('SELECT max(finished_at) AS at FROM jobs')).rows[0]!.at.getTime() - resumed) / 1000);
      await emptyJobs(pool);
      ctx.log(`  worker-side drain: ${Math.round(drainPerS)} jobs/s`);

      // The batch.
      const file = await writeRequests(dir, lines);
      const rss = sampleRss({ api: batchSide.process.child.pid, worker: worker.child.pid });
      const cpuBefore = { api: cpuS(batchSide.process.child.pid), worker: cpuS(worker.child.pid) };
      const uploadStarted = Date.now();
      const form = new FormData();
      form.set('purpose', 'batch');
      form.set('file', await openAsBlob(file.path), 'requests.jsonl');
      const uploaded = await json<{ id: string }>(await fetch(`${batchSide.baseUrl}/v1/files`, { method: 'POST', headers: auth, body: form }));
      const uploadS = (Date.now() - uploadStarted) / 1000;
      const created = await json<{ id: string }>(
        await fetch(`${batchSide.baseUrl}/v1/batches`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ input_file_id: uploaded.id, endpoint: '/v1/jobs', completion_window: '24h' }),
        }),
      );
      type BatchView = { status: string; request_counts: { total: number; completed: number; failed: number }; in_progress_at: number | null };
      const batch = async () => json<BatchView>(await fetch(`${batchSide.baseUrl}/v1/batches/${created.id}`, { headers: auth }));
      const firstResult = await waitFor(
        async () => (await pool.query<{ at: Date }>("SELECT min(finished_at) AS at FROM jobs WHERE priority = 'batch'")).rows[0]!.at,
        { timeoutMs: 3_600_000, intervalMs: 200, what: "the batch's first result" },
      );
      // Interactive traffic while the batch runs, validating (its first lines run as the file is checked) or in progress
      // (it is long: the stream ends well before it).
      const during = ['validating', 'in_progress'].includes((await batch()).status) ? await interactive(stack, interactiveJobs) : NO_LATENCIES;
      let last: BatchView | undefined;
      await waitFor(async () => ['completed', 'failed', 'expired', 'cancelled'].includes((last = await batch()).status), {
        timeoutMs: 4 * 3_600_000,
        intervalMs: 2_000,
        what: () => `the batch to end (${last?.status} ${JSON.stringify(last?.request_counts)})`,
      });
      const memory = await rss.stop();
      const cpuAfter = { api: cpuS(batchSide.process.child.pid), worker: cpuS(worker.child.pid) };
      const {
        rows: [span],
      } = await pool.query<{ s: number; jobs: number }>(
        "SELECT extract(epoch FROM max(finished_at) - min(created_at))::float AS s, count(*)::int AS jobs FROM jobs WHERE priority = 'batch'",
      );
      const batchPerS = span!.jobs / span!.s;
      // The batch's own clock (ms): its validation, and its finalize (the files made from the answers written while it ran).
      const {
        rows: [phases],
      } = await pool.query<{ validating_s: number; finalizing_s: number | null; first_result_s: number; total_s: number | null }>(
        `SELECT extract(epoch FROM in_progress_at - created_at)::float AS validating_s,
                extract(epoch FROM completed_at - created_at)::float AS total_s,
                extract(epoch FROM completed_at - finalizing_at)::float AS finalizing_s,
                extract(epoch FROM $2::timestamptz - created_at)::float AS first_result_s
           FROM bulk_batches WHERE id = $1`,
        [created.id, firstResult],
      );
      const idleP99 = percentile(idle.total, 99);
      const duringP99 = percentile(during.total, 99);
      const ratio = idleP99 && duringP99 !== null ? round(duringP99 / idleP99, 2) : null;
      return {
        id: '14',
        title: this.title,
        metrics: {
          batch_lines: lines,
          batch_api: shared ? 'shared' : 'own',
          batch_status: last!.status,
          batch_completed: last!.request_counts.completed,
          batch_failed: last!.request_counts.failed,
          file_mib: round(file.bytes / 2 ** 20, 1),
          upload_s: round(uploadS, 1),
          upload_to_first_result_s: round((firstResult.getTime() - uploadStarted) / 1000, 1),
          validating_s: round(phases!.validating_s, 1),
          created_to_first_result_s: round(phases!.first_result_s, 1),
          finalizing_s: round(phases!.finalizing_s, 1),
          created_to_completed_s: round(phases!.total_s, 1),
          batch_jobs_per_s: round(batchPerS, 0),
          worker_side_drain_jobs_per_s: round(drainPerS, 0),
          batch_to_drain_ratio: round(batchPerS / drainPerS, 3),
          interactive_p99_idle_ms: idleP99,
          interactive_p99_during_batch_ms: duringP99,
          interactive_p99_ratio: ratio,
          interactive_wait_p99_idle_ms: percentile(idle.wait, 99),
          interactive_wait_p99_during_batch_ms: percentile(during.wait, 99),
          interactive_submit_p99_idle_ms: round(percentile(idle.submit, 99), 1),
          interactive_submit_p99_during_batch_ms: round(percentile(during.submit, 99), 1),
          interactive_api_loop_delay_p99_during_batch_ms: during.loop.p99,
          interactive_api_loop_delay_max_during_batch_ms: during.loop.max,
          api_rss_first_mib: round(memory.api?.first ?? null, 0),
          api_rss_max_mib: round(memory.api?.max ?? null, 0),
          worker_rss_first_mib: round(memory.worker?.first ?? null, 0),
          worker_rss_max_mib: round(memory.worker?.max ?? null, 0),
          // The interactive stream's submits are in the API's figure too (a few hundred jobs beside the batch's lines).
          api_cpu_us_per_line: perLineUs(cpuBefore.api, cpuAfter.api, lines),
          worker_cpu_us_per_line: perLineUs(cpuBefore.worker, cpuAfter.worker, lines),
        },
        goals: [
          goal('batch throughput ÷ the worker-side drain of the same jobs', round(batchPerS / drainPerS, 3), '>=', 0.9),
          // #45: ≤ 2× where one API takes both, ≤ 1.3× with the batch on an API of its own.
          goal('interactive p99 during the batch ÷ without it', ratio, '<=', shared ? 2 : 1.3),
          goal('finalizing: the files made once every job has ended', round(phases!.finalizing_s, 1), '<=', 10, 's'),
          goal("the batch's first result after its creation", round(phases!.first_result_s, 1), '<=', 5, 's'),
        ],
        notes: [
          `A JSONL file of ${lines} one-row MLP requests (${round(file.bytes / 2 ** 20, 1)} MiB, base64 inputs) uploaded with ` +
            'POST /v1/files (streamed from disk), then a batch over it; one worker (max batch ' +
            `${MAX_BATCH_SIZE}, delay ${MAX_BATCH_DELAY_MS} ms, intraOpNumThreads 1), BATCH_JOBS_IN_FLIGHT 10,000.`,
          shared
            ? 'One API process takes the interactive traffic, the file and the batch (BENCH_BATCH_API=shared).'
            : 'Two API processes: interactive traffic goes to one with BATCH_RUNNERS=0, the file and the batch to another that runs it ' +
              '(its RSS and CPU are the figures here).',
          `Ceiling: ${drainJobs} of the same jobs (batch class) queued while the queue was paused, then drained by the same worker.`,
          `Interactive: ${interactiveJobs} normal-priority jobs at ${INTERACTIVE_PER_S}/s, created to finished, alone (after a warm-up) ` +
            'and once the batch had its first result. RSS sampled every second from /proc over the upload and the batch; CPU a line ' +
            'from /proc over the same span (the API on a host apart from the worker submits 1e6 ÷ api_cpu_us_per_line lines a second a core).',
        ],
      };
    } finally {
      await rm(dir, { recursive: true, force: true });
      await stack.close();
    }
  },
};
