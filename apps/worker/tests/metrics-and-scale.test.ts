import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_KEY,
  metricSample as sample,
  mlpJob,
  runLimited,
  type Stack,
  startStack,
  type TestProcess,
  waitFor,
  workerMetricsPort as metricsPort,
} from '@inferq/test-utils';

// Two API processes and two worker processes on one Redis and Postgres (the
// real engines): jobs submitted through both APIs are split across both
// workers, and the Prometheus counters of every process moved.

const JOBS = 200;
let stack: Stack;
let second: { baseUrl: string };
let workers: TestProcess[];
beforeAll(async () => {
  stack = await startStack();
  second = await stack.startApi();
  await stack.registerModel('mlp', { maxBatchSize: '8', maxBatchDelayMs: '2' });
  workers = [await stack.startWorker(), await stack.startWorker()];
});
afterAll(() => stack?.close());

const scrape = async (url: string): Promise<string> => (await fetch(url)).text();
const workerIdOf = (worker: TestProcess): string | undefined => /"workerId":"([^"]+)"/.exec(worker.output())?.[1];

describe('two APIs and two workers on one Redis and Postgres', () => {
  it('split the jobs across both workers, and every process counts what it did at /metrics', async () => {
    const apis = [stack.baseUrl, second.baseUrl];
    await runLimited(JOBS, 16, async (i) => {
      const res = await fetch(`${apis[i % 2]}/v1/jobs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(mlpJob(i)),
      });
      expect(res.status).toBe(202);
    });
    await waitFor(async () => (await stack.ctx.pool.query("SELECT count(*)::int AS n FROM jobs WHERE status = 'succeeded'")).rows[0].n === JOBS, {
      timeoutMs: 60_000,
      what: 'every job to succeed',
    });

    const { rows } = await stack.ctx.pool.query('SELECT worker_id, count(*)::int AS n FROM jobs GROUP BY worker_id ORDER BY worker_id');
    console.log(`jobs per worker: ${rows.map((r) => `${r.worker_id} ${r.n}`).join(', ')}`);
    expect(rows).toHaveLength(2);
    for (const r of rows) expect(r.n).toBeGreaterThan(0);

    for (const url of apis) {
      const text = await scrape(`${url}/metrics`);
      expect(sample(text, 'inferq_jobs_submitted_total', { model: 'mlp', priority: 'normal' })).toBe(JOBS / 2);
      expect(sample(text, 'inferq_http_request_duration_seconds_count', { route: '/v1/jobs', method: 'POST', status_code: '202' })).toBe(JOBS / 2);
      expect(text).toContain('inferq_queue_backlog{model="mlp"} 0');
      expect(text).toContain('inferq_api_process_resident_memory_bytes');
    }

    const scraped = await Promise.all(workers.map((w) => scrape(`http://127.0.0.1:${metricsPort(w)}/metrics`)));
    const finished = scraped.map((text) => sample(text, 'inferq_jobs_finished_total', { model: 'mlp', priority: 'normal', outcome: 'succeeded' }));
    // Each worker's counter against the rows that name it (worker ids need not sort in start order).
    const jobsOf = new Map(rows.map((r) => [r.worker_id as string, r.n as number]));
    expect(finished).toEqual(workers.map((w) => jobsOf.get(workerIdOf(w) ?? '')));
    for (const text of scraped) {
      expect(sample(text, 'inferq_batch_size_count', { model: 'mlp' })).toBeGreaterThan(0);
      expect(sample(text, 'inferq_queue_wait_seconds_count', { model: 'mlp' })).toBeGreaterThan(0);
      expect(sample(text, 'inferq_job_end_to_end_seconds_count', { model: 'mlp' })).toBeGreaterThan(0);
      expect(sample(text, 'inferq_model_load_seconds_count', { model: 'mlp' })).toBe(1);
    }
  });

  it('exports the age of the oldest queued job while nobody drains the queue', async () => {
    await Promise.all(workers.map((w) => w.stop('SIGTERM')));
    const res = await stack.request('POST', '/v1/jobs', { ...mlpJob(1), priority: 'low' });
    expect(res.status).toBe(202);
    // Queue reads are reused for a second across scrapes: wait until one sees the job.
    const text = await waitFor(
      async () => {
        const t = await scrape(`${stack.baseUrl}/metrics`);
        return sample(t, 'inferq_queue_backlog', { model: 'mlp' }) === 1 ? t : undefined;
      },
      { what: 'the backlog metric to count the job' },
    );
    expect(sample(text, 'inferq_queue_jobs', { model: 'mlp', state: 'low' })).toBe(1);
    expect(sample(text, 'inferq_queue_oldest_job_age_seconds', { model: 'mlp', priority: 'low' })).toBeGreaterThan(0);
  });
});
