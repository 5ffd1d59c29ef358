import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@inferq/sdk';
import {
  ADMIN_KEY,
  installCompletionLog,
  mlpJob,
  optionalTestVar,
  postgresHaAvailable,
  settleLoad,
  startPostgresHa,
  startStack,
  startSteadyLoad,
  startWebhookReceiver,
  waitFor,
  type PostgresHa,
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
/** Submits are accepted again within this of the promotion (pools find the new primary at their next connection). */
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

async function stackOn(databaseUrl: string): Promise<{ stack: Stack; worker: TestProcess }> {
  const stack = await startStack({ services: { DATABASE_URL: databaseUrl }, apiEnv: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
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

async function killUnderLoad(what: string, databaseUrl: string): Promise<void> {
  const { stack } = await stackOn(databaseUrl);
  const webhook = { url: receiver.url };
  const load = startSteadyLoad(stack, {
    ratePerS: 25,
    body: (i) => ({ ...mlpJob(i), webhook }),
    authorization: `Bearer ${ADMIN_KEY}`,
    replyTimeoutMs: REPLY_BOUND_MS,
    retry: { retryForMs: 60_000 },
  });
  await waitFor(() => load.accepted.length >= 25, { timeoutMs: 30_000, what: 'jobs accepted before the kill' });
  const watched = load.accepted.slice(-3).map((id) => watchEvents(stack, id, 90_000));

  const killed = await ha!.killPrimary();
  const killedAt = Date.now();
  const promoted = await ha!.waitForNewPrimary(killed, TTL_S * 1000 * 3 + 30_000);
  const promotedAt = Date.now();
  const before = load.accepted.length;
  await waitFor(() => load.accepted.length >= before + 25, { timeoutMs: 30_000, what: 'jobs accepted after the failover' });
  const recoveredAt = Date.now();
  console.log(`${what}: ${killed} killed, ${promoted} promoted after ${promotedAt - killedAt} ms; submits accepted again ${recoveredAt - promotedAt} ms later`);

  const { result, report } = await settleLoad(stack.ctx.pool, load, what, 90_000);
  expect(result.violations).toEqual([]);
  expect(report).toMatchObject({ lost: 0, duplicated: 0, failed: 0, rerun: 0 });
  expect(Object.keys(result.refusedCodes).filter((code) => code !== 'DATABASE_UNAVAILABLE')).toEqual([]);
  expect(Math.max(...result.latenciesMs)).toBeLessThan(REPLY_BOUND_MS + 1_000);
  expect(recoveredAt - promotedAt).toBeLessThan(RECOVERY_MARGIN_MS + 5_000);
  const { rows } = await stack.ctx.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE status = 'running'");
  expect(rows[0]!.n).toBe(0);
  // Every job's webhook reached the receiver with its end, once the dispatcher's retries are through.
  await waitFor(() => result.accepted.every((id) => receiver.statusesOf(id).includes('succeeded')), {
    timeoutMs: 90_000,
    what: () => `every webhook (${result.accepted.filter((id) => !receiver.statusesOf(id).includes('succeeded')).length} missing)`,
  });
  for (const statuses of await Promise.all(watched)) expect(statuses.at(-1)).toBe('succeeded');

  // The killed node rejoins as a replica for the next case.
  await ha!.restartNode(killed);
}

describe.skipIf(!postgresHaAvailable())('the Postgres primary lost under load (Patroni, synchronous replication)', () => {
  it(
    "through the moving endpoint (HAProxy on Patroni's REST API): nothing lost or run twice, submits answered 202 or 503",
    async () => {
      await killUnderLoad('Patroni primary killed, endpoint', ha!.endpointUrl);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'through a multi-host DATABASE_URL with target_session_attrs=read-write: every pool finds the promoted node',
    async () => {
      await killUnderLoad('Patroni primary killed, multi-host URL', ha!.multiHostUrl);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a planned switchover fails no request of an SDK client with its default retries',
    async () => {
      const { stack } = await stackOn(ha!.multiHostUrl);
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
      const { from, to } = await ha!.switchover();
      switched = true;
      await submitting;
      console.log(`switchover ${from} -> ${to}: ${ids.length} submits, ${failures.length} failed`);
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
