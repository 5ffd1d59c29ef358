import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerStatus } from '@inferq/contracts';
import {
  ADMIN_KEY,
  installCompletionLog,
  mlpJob,
  runLimited,
  settleLoad,
  startStack,
  startSteadyLoad,
  waitFor,
  type Stack,
  type TestProcess,
} from '@inferq/test-utils';

// A fleet with bad nodes. A worker whose S3 credentials are wrong cannot
// download any model; a worker whose model cache sits under a file cannot
// write one (a disk fault it recovers from once the file is gone). Promise:
// their faults are not the jobs' — the jobs go back to the queue unspent, the
// healthy worker runs them, 0 fail; the bad workers report themselves not
// ready; with every worker bad the jobs wait (or expire at their deadline),
// and a worker whose cause is gone recovers by itself and runs them.

const BACKLOG = 300;
let stack: Stack;
let dir: string;
const blocker = () => join(dir, 'blocker');
beforeAll(async () => {
  stack = await startStack();
  dir = await mkdtemp(join(tmpdir(), 'inferq-bad-worker-'));
  await writeFile(blocker(), 'a file where the model cache directory should be');
  await installCompletionLog(stack.ctx.pool);
  await stack.registerModel('mlp');
});
afterAll(async () => {
  await stack?.close();
  await rm(dir, { recursive: true, force: true });
});

const workers = async (): Promise<WorkerStatus[]> => (await stack.request('GET', '/v1/workers')).json.items;
const statusOf = async (pid: number | undefined) => (await workers()).find((w) => w.pid === pid);

describe('a bad worker among healthy ones', () => {
  let badCredentials: TestProcess;
  let healthy: TestProcess;

  it('charges none of its faults to the jobs: 0 failed, and it reports itself not ready', async () => {
    // The bad worker first, so it takes jobs before the healthy one exists; a cache of its own (a shared one would hand it the healthy worker's download).
    badCredentials = await stack.startWorker({ S3_ACCESS_KEY_ID: 'MISSING', S3_SECRET_ACCESS_KEY: 'MISSING', MODEL_CACHE_DIR: join(dir, 'own-cache') });
    const ids = await runLimited(BACKLOG, 16, async (i) => (await stack.request('POST', '/v1/jobs', mlpJob(i))).json.id as string);
    await waitFor(async () => (await statusOf(badCredentials.child.pid))?.ready === false, { what: 'the bad worker to report not ready' });
    healthy = await stack.startWorker();
    const load = startSteadyLoad(stack, { ratePerS: 25, body: (i) => mlpJob(BACKLOG + i), authorization: `Bearer ${ADMIN_KEY}` });
    await waitFor(() => load.accepted.length >= 50, { what: 'jobs accepted beside the backlog' });
    const { result, report } = await settleLoad(stack.ctx.pool, load, 'one bad worker (no S3 credentials) among healthy ones', 60_000);
    expect(result.violations).toEqual([]);
    expect(report).toMatchObject({ lost: 0, duplicated: 0, failed: 0 });
    await waitFor(
      async () => (await stack.ctx.pool.query("SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1) AND status = 'succeeded'", [ids])).rows[0].n === BACKLOG,
      { timeoutMs: 60_000, what: 'the backlog to succeed' },
    );
    const {
      rows: [given],
    } = await stack.ctx.pool.query(
      "SELECT count(*)::int AS n, max(attempts)::int AS attempts FROM jobs WHERE cardinality(node_faults) > 0 AND status = 'succeeded'",
    );
    console.log(`jobs the bad worker gave back and the healthy one ran: ${given.n}, most claims counted on one: ${given.attempts}`);
    expect(given.n).toBeGreaterThan(0);
    expect(given.attempts).toBe(1);

    const bad = await statusOf(badCredentials.child.pid);
    expect(bad).toMatchObject({
      ready: false,
      faults: [expect.objectContaining({ model: 'mlp', code: 'MODEL_LOAD_FAILED', message: expect.stringContaining('Access Key') })],
    });
    expect((await statusOf(healthy.child.pid))?.ready).toBe(true);
  });

  it('with every worker bad, jobs wait or expire at their deadline, none fails; a worker whose cause is gone recovers and runs them', async () => {
    await healthy.stop('SIGTERM');
    const badDisk = await stack.startWorker({ MODEL_CACHE_DIR: join(blocker(), 'cache') });
    const waiting = await runLimited(20, 8, async (i) => (await stack.request('POST', '/v1/jobs', mlpJob(i))).json.id as string);
    const deadline = new Date(Date.now() + 1_500).toISOString();
    const expiring = (await stack.request('POST', '/v1/jobs', { ...mlpJob(99), deadline })).json.id as string;
    await waitFor(async () => (await statusOf(badDisk.child.pid))?.ready === false, { what: 'the bad-disk worker to report not ready' });
    await waitFor(async () => (await stack.request('GET', `/v1/jobs/${expiring}`)).json.status === 'expired', { what: 'the job with a deadline to expire' });
    const states = await stack.ctx.pool.query('SELECT status, count(*)::int AS n FROM jobs WHERE id = ANY($1) GROUP BY status', [waiting]);
    expect(states.rows.filter((r) => r.status !== 'queued' && r.status !== 'running')).toEqual([]);

    // The cause goes away: the worker's next load attempt succeeds and it takes the model's jobs again.
    await rm(blocker());
    await waitFor(async () => (await statusOf(badDisk.child.pid))?.ready === true, { timeoutMs: 60_000, what: 'the worker to recover by itself' });
    await waitFor(
      async () => (await stack.ctx.pool.query("SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1) AND status = 'succeeded'", [waiting])).rows[0].n === 20,
      { timeoutMs: 60_000, what: 'the waiting jobs to run' },
    );
    expect((await stack.ctx.pool.query("SELECT count(*)::int AS n FROM jobs WHERE status = 'failed'")).rows[0].n).toBe(0);
  });
});
