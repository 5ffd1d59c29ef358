import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_KEY,
  auditAttempts,
  installCompletionLog,
  mlpJob,
  namespacesUnavailable,
  pauseWorkerMidBatch,
  resumeWorker,
  settleLoad,
  startHostsApart,
  startSteadyLoad,
  startWebhookReceiver,
  waitFor,
  type HostsApart,
  type LedgerReport,
  type SteadyLoad,
  type WebhookReceiver,
} from '@inferq/test-utils';

// Hosts apart (issue 16): Redis, Postgres, S3, two API replicas and two
// workers each in a network namespace of its own on a private bridge. Under a
// steady load through both replicas, one fault at a time, then healed: a
// worker cut off from Redis mid-batch, a worker cut off from Postgres, one
// replica cut off from Redis, 5 % loss and then 200 ms of delay between the
// workers and Redis; and two at once: Postgres restarting while a worker is
// cut off from Redis. For each: no job lost, none duplicated or failed, each
// finished job's result, provenance and device time from one attempt, and
// one webhook per job.

const unavailable = namespacesUnavailable();
if (unavailable) console.log(`hosts-apart tests skipped: ${unavailable}`);

const RATE_PER_API_S = 10;
let s: HostsApart;
let receiver: WebhookReceiver;
let phase = 0;
const allAccepted: string[] = [];
/** The loads of the running test: stopped after it, whether it passed or not, so none runs into the next. */
const running: SteadyLoad[] = [];

/** One load per replica; seeds differ per replica and phase, so no submission is a response-cache hit. */
function startLoads(): [SteadyLoad, SteadyLoad] {
  const base = ++phase * 100_000;
  const loads = s.apis.map((api, replica) =>
    startSteadyLoad(api, {
      ratePerS: RATE_PER_API_S,
      authorization: `Bearer ${ADMIN_KEY}`,
      body: (i) => ({ ...mlpJob(base + i * 2 + replica), webhook: { url: receiver.url } }),
    }),
  ) as [SteadyLoad, SteadyLoad];
  running.push(...loads);
  return loads;
}

const acceptedSoFar = (loads: SteadyLoad[]) => loads.flatMap((l) => [...l.accepted]);
const moreAccepted = async (loads: SteadyLoad[], n: number, what: string) => {
  const target = acceptedSoFar(loads).length + n;
  await waitFor(() => acceptedSoFar(loads).length >= target, { timeoutMs: 20_000, what });
};
const unfinished = async (ids: string[]) =>
  (await s.ctx.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) AND status IN ('queued', 'running')", [ids])).rows[0]!
    .n;
const finishedBy = async (workerId: string, sinceMs: number) =>
  (
    await s.ctx.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE worker_id = $1 AND status = 'succeeded' AND finished_at > $2", [
      workerId,
      new Date(sinceMs),
    ])
  ).rows[0]!.n;

/** Waits until every job accepted before the heal has finished; returns the milliseconds since the heal. */
async function recoveredMs(loads: SteadyLoad[], healedAtMs: number): Promise<number> {
  const before = acceptedSoFar(loads);
  await waitFor(async () => (await unfinished(before)) === 0, { timeoutMs: 60_000, intervalMs: 100, what: 'the jobs accepted before the heal to finish' });
  return Date.now() - healedAtMs;
}

/** Settles both loads, prints one line for the fault, and checks the promise: nothing lost, duplicated or failed, one attempt per result, one webhook each. */
async function settlePhase(what: string, loads: SteadyLoad[], recoverMs: number): Promise<LedgerReport[]> {
  const settled = [];
  for (const [i, load] of loads.entries()) settled.push(await settleLoad(s.ctx.pool, load, `${what}, API ${i + 1}`));
  allAccepted.push(...settled.flatMap((x) => x.result.accepted));
  const reports = settled.map((x) => x.report);
  const sum = (k: keyof LedgerReport) => reports.reduce((n, r) => n + r[k], 0);
  const longest503 = Math.max(...settled.map((x) => x.result.longestRefusalMs));
  console.log(
    `${what}: accepted ${sum('accepted')}, completed ${sum('completed')}, lost ${sum('lost')}, duplicated ${sum('duplicated')}, ` +
      `failed ${sum('failed')}, run twice ${sum('rerun')}, longest 503 run ${longest503} ms, recovered ${recoverMs} ms after the heal`,
  );
  for (const { result, report } of settled) {
    expect(result.violations).toEqual([]);
    expect(report).toMatchObject({ lost: 0, duplicated: 0, failed: 0 });
    expect(report.completed).toBe(report.accepted);
  }
  const ids = settled.flatMap((x) => x.result.accepted);
  expect(await auditAttempts(s.ctx.pool, s.ctx.storage, ids)).toEqual([]);
  await expectOneWebhookEach(ids);
  return reports;
}

async function expectOneWebhookEach(ids: string[]): Promise<void> {
  await waitFor(
    async () =>
      (await s.ctx.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) AND webhook_state = 'delivered'", [ids])).rows[0]!
        .n === ids.length,
    { timeoutMs: 30_000, intervalMs: 200, what: 'every webhook delivered' },
  );
  const wrong = ids.filter((id) => receiver.statusesOf(id).join() !== 'succeeded');
  expect(wrong.map((id) => `${id}: ${JSON.stringify(receiver.statusesOf(id))}`)).toEqual([]);
}

describe.skipIf(unavailable !== undefined)('hosts apart: one fault at a time under steady load', () => {
  beforeAll(async () => {
    // Outputs go to S3 (keys per batch), so each result's objects can be traced to its attempt.
    // Claims written at once (WORKER_RUNNING_MARK_MS=0): Postgres shows which jobs a paused worker holds.
    s = await startHostsApart({ workerEnv: { INLINE_TENSOR_MAX_BYTES: '0', WORKER_RUNNING_MARK_MS: '0' } });
    receiver = await startWebhookReceiver(s.network.rootAddress);
    await installCompletionLog(s.ctx.pool);
    await s.registerModel('mlp');
  }, 180_000);
  afterEach(async () => {
    await Promise.all(running.splice(0).map((load) => load.stop()));
    for (const w of s.workers) resumeWorker(w.process);
    await s.faults.heal();
    await s.setWorkerRedisDelayMs(0);
  });
  afterAll(async () => {
    if (s) for (const w of s.workers) resumeWorker(w.process);
    await s?.close();
    await receiver?.close();
  });

  it('a worker cut off from Redis mid-batch: the jobs run again elsewhere, its late write is refused', async () => {
    const [a, b] = s.workers;
    const loads = startLoads();
    await moreAccepted(loads, 20, 'jobs accepted before the partition');
    const logFrom = a.process.output().length;
    await pauseWorkerMidBatch(a.process, s.ctx.pool, a.workerId);
    const { rows: held } = await s.ctx.pool.query<{ id: string; batch_id: string }>(
      "SELECT id, batch_id FROM jobs WHERE status = 'running' AND worker_id = $1",
      [a.workerId],
    );
    await s.faults.partition(a.host, s.redis);
    const heldIds = held.map((r) => r.id);
    // Its lock expires; the other worker's stalled check hands the jobs back and it runs them.
    await waitFor(
      async () =>
        (
          await s.ctx.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) AND status = 'succeeded' AND worker_id = $2", [
            heldIds,
            b.workerId,
          ])
        ).rows[0]!.n === heldIds.length,
      { timeoutMs: 30_000, intervalMs: 100, what: 'the other worker to run the held jobs again' },
    );
    // Still cut off from Redis, the worker wakes up and finishes its batch: Postgres refuses the stale write.
    resumeWorker(a.process);
    await a.process.waitForOutput(/results not stored: the jobs were canceled or finished by another attempt/, 20_000);
    expect(a.process.output().slice(logFrom)).toMatch(/results not stored/);
    await s.faults.heal();
    const healedAtMs = Date.now();
    await waitFor(async () => (await finishedBy(a.workerId, healedAtMs)) > 0, { timeoutMs: 60_000, intervalMs: 100, what: 'the worker to run a batch again' });
    const recoverMs = Math.max(await recoveredMs(loads, healedAtMs), Date.now() - healedAtMs);
    await moreAccepted(loads, 10, 'jobs accepted after the heal');
    await settlePhase(`worker cut off from Redis mid-batch (${held.length} jobs held)`, loads, recoverMs);
    const { rows: after } = await s.ctx.pool.query<{ id: string; batch_id: string; worker_id: string; attempts: number }>(
      'SELECT id, batch_id, worker_id, attempts FROM jobs WHERE id = ANY($1::uuid[])',
      [heldIds],
    );
    for (const r of after) {
      expect(r.worker_id).toBe(b.workerId);
      expect(r.batch_id).not.toBe(held.find((h) => h.id === r.id)!.batch_id);
      expect(r.attempts).toBeGreaterThanOrEqual(2);
    }
  });

  it('a worker cut off from Postgres: it holds its jobs until the heal, the other keeps running', async () => {
    const [a, b] = s.workers;
    const loads = startLoads();
    await moreAccepted(loads, 20, 'jobs accepted before the partition');
    await s.faults.partition(a.host, s.postgres);
    const cutAtMs = Date.now();
    await waitFor(async () => (await finishedBy(b.workerId, cutAtMs)) >= 80, { timeoutMs: 30_000, intervalMs: 100, what: 'the other worker to keep running' });
    await s.faults.heal();
    const healedAtMs = Date.now();
    await waitFor(async () => (await finishedBy(a.workerId, healedAtMs)) > 0, { timeoutMs: 60_000, intervalMs: 100, what: 'the worker to run a batch again' });
    const recoverMs = Math.max(await recoveredMs(loads, healedAtMs), Date.now() - healedAtMs);
    await moreAccepted(loads, 10, 'jobs accepted after the heal');
    await settlePhase('worker cut off from Postgres', loads, recoverMs);
  });

  it('two faults at once: Postgres restarts while a worker is cut off from Redis', async () => {
    const [a] = s.workers;
    const loads = startLoads();
    await moreAccepted(loads, 20, 'jobs accepted before the faults');
    await s.faults.partition(a.host, s.redis);
    await s.restartPostgres();
    await s.faults.heal();
    const healedAtMs = Date.now();
    await moreAccepted(loads, 20, 'jobs accepted after the faults');
    await settlePhase('Postgres restarted while a worker was cut off from Redis', loads, await recoveredMs(loads, healedAtMs));
  });

  it('one API replica cut off from Redis: it answers 503 with Retry-After, the other keeps accepting', async () => {
    const [api1] = s.apis;
    const loads = startLoads();
    await moreAccepted(loads, 20, 'jobs accepted before the partition');
    await s.faults.partition(api1.host, s.redis);
    // About four seconds: the other replica's load goes on meanwhile.
    await moreAccepted([loads[1]], 80, 'the other replica to keep accepting');
    await s.faults.heal();
    const healedAtMs = Date.now();
    const acceptedAtHeal = loads[0].accepted.length;
    await waitFor(() => loads[0].accepted.length > acceptedAtHeal, { timeoutMs: 30_000, what: 'the replica to accept again' });
    const recoverMs = Math.max(await recoveredMs(loads, healedAtMs), Date.now() - healedAtMs);
    await moreAccepted(loads, 10, 'jobs accepted after the heal');
    const [api1Report, api2Report] = await settlePhase('API replica cut off from Redis', loads, recoverMs);
    expect(api1Report!.refused).toBeGreaterThan(0);
    expect(api2Report!.refused).toBe(0);
  });

  it('5 % packet loss between the workers and Redis', async () => {
    const loads = startLoads();
    await moreAccepted(loads, 20, 'jobs accepted before the loss');
    for (const w of s.workers) await s.faults.loss(w.host, s.redis, 5);
    await moreAccepted(loads, 120, 'jobs accepted under loss');
    await s.faults.heal();
    const healedAtMs = Date.now();
    const recoverMs = await recoveredMs(loads, healedAtMs);
    await moreAccepted(loads, 10, 'jobs accepted after the heal');
    await settlePhase('5 % loss between workers and Redis', loads, recoverMs);
  });

  it('200 ms of added delay between the workers and Redis', async () => {
    const loads = startLoads();
    await moreAccepted(loads, 20, 'jobs accepted before the delay');
    await s.setWorkerRedisDelayMs(200);
    await moreAccepted(loads, 120, 'jobs accepted under delay');
    await s.setWorkerRedisDelayMs(0);
    const healedAtMs = Date.now();
    const recoverMs = await recoveredMs(loads, healedAtMs);
    await moreAccepted(loads, 10, 'jobs accepted after the heal');
    await settlePhase('200 ms delay between workers and Redis', loads, recoverMs);
  });

  it('usage counts each finished job once, and no webhook came twice', async () => {
    const usage = await fetch(`${s.apis[1].baseUrl}/v1/usage?groupBy=model`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    const body = (await usage.json()) as { total: { jobs: number; deviceMs: number } };
    // Every job in this schema came from the loads; one row per job, charged with the device time of the attempt that stored it.
    const { rows } = await s.ctx.pool.query<{ n: number; device_ms: number }>(
      "SELECT count(*)::int AS n, sum(device_ms)::float8 AS device_ms FROM jobs WHERE status = 'succeeded'",
    );
    expect(body.total.jobs).toBe(rows[0]!.n);
    expect(body.total.deviceMs).toBeCloseTo(rows[0]!.device_ms, 3);
    expect(allAccepted.filter((id) => receiver.statusesOf(id).length !== 1)).toEqual([]);
  });
});
