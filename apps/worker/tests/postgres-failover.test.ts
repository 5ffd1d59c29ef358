import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueNameFor } from '@inferq/queue';
import { createClient } from '@inferq/sdk';
import {
  ADMIN_KEY,
  auditJobs,
  formatLedger,
  installCompletionLog,
  mlpJob,
  optionalTestVar,
  postgresHaAvailable,
  settleLoad,
  startPostgresHa,
  startStack,
  startSteadyLoad,
  startRedisSentinel,
  startWebhookReceiver,
  waitFor,
  type PostgresHa,
  type RedisTopologyServers,
  type SteadyLoad,
  type Stack,
  type TestProcess,
  type WebhookReceiver,
} from '@inferq/test-utils';

// The record's primary lost under load: a Patroni cluster (etcd, three Postgres 15 nodes, synchronous replication,
// HAProxy routing to the node Patroni calls primary), its primary SIGKILLed, then a planned switchover. The stack
// reaches it both ways operators run it: through the moving endpoint (HAProxy here; a -rw Service or an RDS name
// elsewhere) and by a multi-host DATABASE_URL with target_session_attrs=read-write, which inferq honours itself.
// A steady load submits as the SDK does (an Idempotency-Key a submission, sent again after a 503 or no reply), a
// worker drains, every job posts a webhook and a few are watched over SSE across the failover.
// Promise: 0 accepted jobs lost, 0 run twice, 0 failed for the fault's sake; every submit answered 202 or 503 with
// Retry-After within the reply bound; submits accepted again soon after the promotion; no job left running.

/** Patroni's leader-key TTL, loop wait and retry timeout; the figures in docs/reliability.md at Patroni's defaults come from 30/10/10. */
const [TTL_S, LOOP_WAIT_S, RETRY_TIMEOUT_S] = optionalTestVar('INFERQ_PATRONI_TIMINGS', '10/2/4').split('/').map(Number) as [number, number, number];
/** Submits are accepted again within this of the promotion (pools find the new primary at their next connection; measured: well under 1 s). */
const RECOVERY_MARGIN_MS = 5_000;
/** The longest any one submit try may take: the reply timeout of the load. */
const REPLY_BOUND_MS = 5_000;
const TEST_TIMEOUT_MS = TTL_S * 1000 * 3 + 150_000;

let ha: PostgresHa | undefined;
let receiver: WebhookReceiver;
beforeAll(async () => {
  if (!postgresHaAvailable()) return;
  [ha, receiver] = await Promise.all([
    startPostgresHa({ nodes: 3, synchronous: true, ttl: TTL_S, loopWait: LOOP_WAIT_S, retryTimeout: RETRY_TIMEOUT_S }),
    startWebhookReceiver(),
  ]);
}, 180_000);
afterAll(async () => {
  await receiver?.close();
  await ha?.close();
});

const open: Array<{ close(): Promise<void> }> = [];
afterAll(async () => {
  for (const o of open.reverse()) await o.close();
});

async function stackOn(services: Record<string, string>): Promise<{ stack: Stack; worker: TestProcess }> {
  const stack = await startStack({ services, apiEnv: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  open.push(stack);
  await installCompletionLog(stack.ctx.pool);
  await stack.registerModel('mlp');
  const worker = await stack.startWorker();
  return { stack, worker };
}

/** Follows a job's SSE stream to its end; resolves with the statuses it saw (reconnecting with Last-Event-ID, as EventSource does). */
async function watchEvents(stack: Stack, jobId: string, timeoutMs: number): Promise<string[]> {
  const statuses: string[] = [];
  let lastId: string | undefined;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${stack.baseUrl}/v1/jobs/${jobId}/events`, {
        headers: { authorization: `Bearer ${ADMIN_KEY}`, accept: 'text/event-stream', ...(lastId ? { 'last-event-id': lastId } : {}) },
        signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())),
      });
      if (res.status !== 200 || !res.body) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        continue;
      }
      let buffered = '';
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        buffered += read.value;
        for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
          const event = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const id = /^id: ?(.*)$/m.exec(event)?.[1];
          const data = /^data: ?(.*)$/m.exec(event)?.[1];
          if (id) lastId = id;
          if (!data) continue;
          const status = (JSON.parse(data) as { status?: string }).status;
          if (status) statuses.push(status);
          if (status && !['queued', 'running'].includes(status)) {
            await reader.cancel();
            return statuses;
          }
        }
      }
    } catch {
      // The stream broke (the API's read failed over): reconnect where it was.
    }
  }
  return statuses;
}

interface Fault {
  /** `kill`: SIGKILL (connections reset); `freeze`: SIGSTOP (a host that vanished: connections hang until a timeout). */
  how: 'kill' | 'freeze';
  /** A Redis Sentinel group whose primary is SIGKILLed at the same moment: two faults at once. */
  redis?: RedisTopologyServers;
  /** The stack's DATABASE_QUERY_TIMEOUT_MS, what a hung statement may cost (the default 15 s elsewhere). */
  queryTimeoutMs?: number;
}

async function failOverUnderLoad(what: string, databaseUrl: string, fault: Fault): Promise<void> {
  const timeouts: Record<string, string> = fault.queryTimeoutMs ? { DATABASE_QUERY_TIMEOUT_MS: String(fault.queryTimeoutMs) } : {};
  const { stack } = await stackOn({ DATABASE_URL: databaseUrl, ...(fault.redis ? { REDIS_URL: fault.redis.url } : {}), ...timeouts } as Record<string, string>);
  // A submit's statements wait at most a query timeout, or a connect timeout (5 s) for a connection: the documented bound.
  const replyBoundMs = Math.max(REPLY_BOUND_MS, (fault.queryTimeoutMs ?? 0) + 5_000);
  const webhook = { url: receiver.url };
  const load = startSteadyLoad(stack, {
    ratePerS: 25,
    body: (i) => ({ ...mlpJob(i), webhook }),
    authorization: `Bearer ${ADMIN_KEY}`,
    replyTimeoutMs: replyBoundMs,
    retry: { retryForMs: 90_000 },
  });
  await waitFor(() => load.accepted.length >= 25, { timeoutMs: 30_000, what: 'jobs accepted before the fault' });
  const watched = load.accepted.slice(-3).map((id) => watchEvents(stack, id, 120_000));

  const faultAt = Date.now();
  const [lost] = await Promise.all([fault.how === 'kill' ? ha!.killPrimary() : ha!.freezePrimary(), fault.redis?.killPrimary(queueNameFor('mlp'))]);
  try {
    await proveFailover(what, stack, load, { lost, faultAt, replyBoundMs, watched, fault });
  } finally {
    // The lost node rejoins as a replica for the next case, whatever this one came to.
    if (fault.how === 'freeze') await ha!.killNode(lost);
    await ha!.restartNode(lost);
  }
}

async function proveFailover(
  what: string,
  stack: Stack,
  load: SteadyLoad,
  o: { lost: string; faultAt: number; replyBoundMs: number; watched: Array<Promise<string[]>>; fault: Fault },
): Promise<void> {
  const { lost, faultAt, replyBoundMs, watched, fault } = o;
  const promoted = await ha!.waitForNewPrimary(lost, TTL_S * 1000 * 3 + 30_000);
  const promotedAt = Date.now();
  const before = load.accepted.length;
  await waitFor(() => load.accepted.length > before, { timeoutMs: 30_000, intervalMs: 20, what: 'a job accepted after the failover' });
  const recoveryMs = Date.now() - promotedAt;
  console.log(
    `${what}: ${lost} ${fault.how === 'kill' ? 'killed' : 'frozen'}, ${promoted} promoted after ${promotedAt - faultAt} ms; ` +
      `submits accepted again ${recoveryMs} ms later`,
  );
  await waitFor(() => load.accepted.length >= before + 25, { timeoutMs: 30_000, what: 'jobs accepted after the failover' });

  const { result, report } = await settleLoad(stack.ctx.pool, load, what, 120_000);
  expect(result.violations).toEqual([]);
  expect(report).toMatchObject({ lost: 0, duplicated: 0, failed: 0 });
  // A Redis primary killed too may lose acknowledged queue writes (its replication is asynchronous): the reconciler
  // queues those jobs again, and a lock lost with it lets a batch run again, its second result fenced out.
  if (!fault.redis) expect(report.rerun).toBe(0);
  const expectedCodes = fault.redis ? ['DATABASE_UNAVAILABLE', 'QUEUE_UNAVAILABLE'] : ['DATABASE_UNAVAILABLE'];
  expect(Object.keys(result.refusedCodes).filter((code) => !expectedCodes.includes(code))).toEqual([]);
  expect(Math.max(...result.latenciesMs)).toBeLessThan(replyBoundMs);
  expect(recoveryMs).toBeLessThan(RECOVERY_MARGIN_MS);
  const { rows } = await stack.ctx.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE status = 'running'");
  expect(rows[0]!.n).toBe(0);
  // Every job's webhook reached the receiver with its end, once the dispatcher's retries are through.
  await waitFor(() => result.accepted.every((id) => receiver.statusesOf(id).includes('succeeded')), {
    timeoutMs: 90_000,
    what: () => `every webhook (${result.accepted.filter((id) => !receiver.statusesOf(id).includes('succeeded')).length} missing)`,
  });
  for (const statuses of await Promise.all(watched)) expect(statuses.at(-1)).toBe('succeeded');
}

describe.skipIf(!postgresHaAvailable())('the Postgres primary lost under load (Patroni, synchronous replication)', () => {
  it(
    "through the moving endpoint (HAProxy on Patroni's REST API): nothing lost or run twice, submits answered 202 or 503",
    async () => {
      await failOverUnderLoad('Patroni primary killed, endpoint', ha!.endpointUrl, { how: 'kill' });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'through a multi-host DATABASE_URL with target_session_attrs=read-write: every pool finds the promoted node',
    async () => {
      await failOverUnderLoad('Patroni primary killed, multi-host URL', ha!.multiHostUrl, { how: 'kill' });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a primary that vanishes without a reset (SIGSTOP: connections hang): pools give up on it within their timeouts and find the promoted node',
    async () => {
      await failOverUnderLoad('Patroni primary frozen, multi-host URL', ha!.multiHostUrl, { how: 'freeze', queryTimeoutMs: 5_000 });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'two faults at once: the Postgres primary and the Redis Sentinel primary SIGKILLed together',
    async () => {
      const redis = await startRedisSentinel({ nodeTimeoutMs: 1_000 });
      open.push(redis);
      await failOverUnderLoad('Patroni and Redis Sentinel primaries killed', ha!.endpointUrl, { how: 'kill', redis });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a planned switchover fails no request of an SDK client with its default retries',
    async () => {
      const { stack } = await stackOn({ DATABASE_URL: ha!.multiHostUrl });
      const client = createClient({ baseUrl: stack.baseUrl, apiKey: ADMIN_KEY });
      const failures: string[] = [];
      const ids: string[] = [];
      let switched = false;
      const submitting = (async () => {
        for (let i = 0; !switched || i < 40; i++) {
          try {
            ids.push((await client.jobs.submit(mlpJob(i))).id);
          } catch (err) {
            failures.push((err as Error).message);
          }
          await new Promise((resolve) => setTimeout(resolve, 40));
        }
      })();
      await waitFor(() => ids.length >= 20, { timeoutMs: 30_000, what: 'submits before the switchover' });
      const { from, to, ms } = await ha!.switchover();
      switched = true;
      await submitting;
      console.log(`switchover ${from} -> ${to} in ${ms} ms: ${ids.length} submits, ${failures.length} failed`);
      expect(failures).toEqual([]);
      await waitFor(
        async () =>
          (await stack.ctx.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) AND status = 'succeeded'", [ids])).rows[0]!
            .n === ids.length,
        { timeoutMs: 60_000, what: 'every job submitted across the switchover to succeed' },
      );
    },
    TEST_TIMEOUT_MS,
  );
});

// The same kill with the standby asynchronous, and replication held back for a moment first (its walsender paused,
// as a busy network or disk does): the new primary lacks the last commits the old one acknowledged. What is lost is
// counted and said: every accepted job the new primary lacks answers 410 JOB_LOST, none 404 (a queue entry that
// waited is found by a worker's claim; a job that ran and finished on the lost timeline, by the API that accepted it).
describe.skipIf(!postgresHaAvailable())('the Postgres primary lost with an asynchronous standby', () => {
  let asyncHa: PostgresHa | undefined;
  beforeAll(async () => {
    asyncHa = await startPostgresHa({ nodes: 2, synchronous: false, ttl: TTL_S, loopWait: LOOP_WAIT_S, retryTimeout: RETRY_TIMEOUT_S });
  }, 180_000);
  afterAll(() => asyncHa?.close());

  it(
    'loses the jobs accepted while replication lagged, and says so for each: 410 JOB_LOST, counted, never 404',
    async () => {
      const { stack } = await stackOn({ DATABASE_URL: asyncHa!.endpointUrl });
      const load = startSteadyLoad(stack, { ratePerS: 25, body: mlpJob, authorization: `Bearer ${ADMIN_KEY}`, retry: { retryForMs: 90_000 } });
      await waitFor(() => load.accepted.length >= 25, { timeoutMs: 30_000, what: 'jobs accepted before the kill' });
      await asyncHa!.pauseReplication();
      const paused = load.accepted.length;
      await waitFor(() => load.accepted.length >= paused + 25, { timeoutMs: 30_000, what: 'jobs accepted while replication is held back' });
      const killed = await asyncHa!.killPrimary();
      await asyncHa!.waitForNewPrimary(killed, TTL_S * 1000 * 3 + 30_000);
      const after = load.accepted.length;
      await waitFor(() => load.accepted.length >= after + 25, { timeoutMs: 30_000, what: 'jobs accepted after the failover' });

      const result = await load.stop();
      const { rows } = await stack.ctx.pool.query<{ id: string }>('SELECT id::text FROM jobs WHERE id = ANY($1::uuid[])', [result.accepted]);
      const present = rows.map((r) => r.id);
      const missing = result.accepted.filter((id) => !present.includes(id));
      // The jobs the new primary has end (settleLoad would wait for the missing ones too).
      await waitFor(
        async () =>
          (
            await stack.ctx.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) AND status IN ('queued', 'running')", [
              present,
            ])
          ).rows[0]!.n === 0,
        { timeoutMs: 120_000, intervalMs: 200, what: 'every job the new primary has to end' },
      );
      const report = await auditJobs(stack.ctx.pool, result);
      console.log(formatLedger('async Patroni primary killed', report));
      const answers: Record<string, number> = {};
      await waitFor(
        async () => {
          for (const key of Object.keys(answers)) delete answers[key];
          for (const id of missing) {
            const { status, json } = await stack.request('GET', `/v1/jobs/${id}`, undefined, { authorization: `Bearer ${ADMIN_KEY}` });
            const answer = `${status} ${(json as { code?: string }).code ?? ''}`;
            answers[answer] = (answers[answer] ?? 0) + 1;
          }
          return Object.keys(answers).every((a) => a === '410 JOB_LOST');
        },
        { timeoutMs: 60_000, what: () => `every lost job answered 410 JOB_LOST (${JSON.stringify(answers)})` },
      );
      console.log(`async Patroni primary killed: ${missing.length} accepted jobs lost with the old primary's last commits, answers ${JSON.stringify(answers)}`);
      expect(missing.length).toBeGreaterThan(0);
      expect(result.violations).toEqual([]);
      // Every job the new primary has ends; none has two results.
      expect(report.completed + report.failed).toBe(result.accepted.length - missing.length);
      expect(report.duplicated).toBe(0);
    },
    TEST_TIMEOUT_MS,
  );
});
