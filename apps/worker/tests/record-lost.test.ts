import { createJobProducer, createRedisConnection } from '@inferq/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, metricSample as sample, mlpJob, type Stack, startStack, waitFor, workerMetricsPort as metricsPort } from '@inferq/test-utils';

// Invariant 12, the asynchronous case: a failover to an asynchronous standby
// drops the last commits the old primary acknowledged, among them rows of jobs
// the API had accepted (202) and queued. Their queue entries outlive them in
// Redis. The worker must tell those apart from canceled jobs: drop them
// (never run, never a crash or a stuck entry), count them, say so, and record
// them so that a client polling one learns it was lost (410 JOB_LOST).

const JOBS = 12;
let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
  await stack.registerModel('mlp', { maxBatchSize: '8', maxBatchDelayMs: '20' });
});
afterAll(() => stack?.close());

const count = async (sql: string, ids: string[]): Promise<number> => (await stack.ctx.pool.query(sql, [ids])).rows[0].n;

/**
 * Submits JOBS jobs with no worker running, deletes a third of their rows (and cancels one more under its entry), then
 * starts a worker with `workerEnv` and checks what it made of them; the worker is stopped at the end.
 */
async function loseSomeWhileQueued(workerEnv: Record<string, string>, seed: number): Promise<void> {
  // No worker yet: the entries wait in Redis, as they do while Postgres fails over.
  const ids: string[] = [];
  for (let i = 0; i < JOBS; i++) {
    const res = await stack.request('POST', '/v1/jobs', mlpJob(seed + i));
    expect(res.status).toBe(202);
    ids.push(res.json.id);
  }
  const lost = ids.filter((_, i) => i % 3 === 0);
  const canceled = ids[1]!;
  const kept = ids.filter((id) => !lost.includes(id) && id !== canceled);
  // What the promotion of a standby that missed the last commits leaves: no row at all, the queue entry still there.
  expect((await stack.ctx.pool.query('DELETE FROM jobs WHERE id = ANY($1::uuid[])', [lost])).rowCount).toBe(lost.length);
  // A job canceled with its queue entry left behind (the cancel's removal is best effort): skipped, and not lost.
  await stack.ctx.pool.query("UPDATE jobs SET status = 'canceled', finished_at = now() WHERE id = $1", [canceled]);

  const worker = await stack.startWorker(workerEnv);
  await waitFor(async () => (await count("SELECT count(*)::int AS n FROM jobs WHERE status = 'succeeded' AND id = ANY($1::uuid[])", kept)) === kept.length, {
    timeoutMs: 60_000,
    what: 'the jobs whose rows are there to succeed',
  });
  await waitFor(async () => (await count('SELECT count(*)::int AS n FROM lost_jobs WHERE id = ANY($1::uuid[])', lost)) === lost.length, {
    what: 'the lost jobs to be recorded',
  });
  const { rows } = await stack.ctx.pool.query('SELECT id::text, model FROM lost_jobs WHERE id = ANY($1::uuid[]) ORDER BY id', [ids]);
  expect(rows).toEqual([...lost].sort().map((id) => ({ id, model: 'mlp' })));

  // Counted once each, in the worker's metrics.
  const url = `http://127.0.0.1:${metricsPort(worker)}/metrics`;
  await waitFor(async () => sample(await (await fetch(url)).text(), 'inferq_jobs_record_lost_total', { model: 'mlp' }) === lost.length, {
    what: 'inferq_jobs_record_lost_total to count the lost jobs',
  });
  // Said at warn level, once a batch, with the ids.
  const warnings = worker
    .output()
    .split('\n')
    .filter((line) => line.includes('queue entries whose job row is gone'));
  expect(warnings.length).toBeGreaterThan(0);
  expect(warnings.length).toBeLessThanOrEqual(lost.length);
  for (const line of warnings) expect(JSON.parse(line).level).toBe(40);
  for (const id of lost) expect(warnings.join('\n')).toContain(id);
  expect(worker.output()).not.toMatch(/batch failed before its results were stored/);

  // Nothing is left in Redis to run or to stall.
  const connection = createRedisConnection(stack.ctx.env.REDIS_URL!, 'producer');
  const producer = createJobProducer({ connection, prefix: stack.ctx.prefix });
  try {
    await waitFor(
      async () => {
        const { high, normal, low, batch, active, delayed } = await producer.readDepth('mlp');
        return high + normal + low + batch + active + delayed === 0;
      },
      { what: 'the queue to be empty' },
    );
    expect(await producer.findQueuedIds('mlp', lost)).toEqual(new Set());
  } finally {
    await producer.close();
    connection.disconnect();
  }

  // A client polling a lost job learns what happened; the canceled one is still a job; an unknown id is still 404.
  for (const id of lost) {
    const res = await stack.request('GET', `/v1/jobs/${id}`);
    expect(res.status).toBe(410);
    expect(res.json).toMatchObject({ status: 410, code: 'JOB_LOST' });
    expect(res.json.detail).toMatch(/accepted, but a database failover to an asynchronous standby lost its record, and any result it had; submit it again/);
    expect(Date.parse(res.json.lostAt)).toBeGreaterThan(0);
  }
  const events = await fetch(`${stack.baseUrl}/v1/jobs/${lost[0]}/events`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  expect(events.status).toBe(410);
  expect((await events.json()).code).toBe('JOB_LOST');
  expect((await stack.request('GET', `/v1/jobs/${canceled}`)).json.status).toBe('canceled');
  expect((await stack.request('GET', `/v1/jobs/${lost[0]!.slice(0, -4)}0000`)).status).toBe(404);
  await worker.stop();
}

describe('queue entries whose job rows the record lost (a failover to an asynchronous standby)', () => {
  it('are dropped, counted, said and recorded; the other jobs run; a poll of a lost one answers 410 JOB_LOST', async () => {
    await loseSomeWhileQueued({}, 0);
  });

  it('are counted by a worker whose batches run in feeder threads too (WORKER_FEEDERS=2)', async () => {
    await loseSomeWhileQueued({ WORKER_FEEDERS: '2' }, 100);
  });
});
