import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pRetry from 'p-retry';
import { WebhookHeader } from '@inferq/contracts';
import type { Logger } from '@inferq/core';
import { claimDueWebhooks, findJob, isDatabaseUnavailable, recordWebhookAttempts, type ClaimedWebhook, type Pool, type WebhookAttempt } from '@inferq/db';
import type { TensorStore } from '@inferq/storage';
import { toJobDetail } from '../services/jobs/view/job-view.ts';
import { webhookRetryDelayMs } from './backoff.ts';
import { deriveSigningKey, signWebhook } from '../services/webhooks/signing.ts';
import { createWebhookSender } from './webhook-sender.ts';

/** A claimed attempt stays leased this much longer than its timeout, for the reads and writes around the POST. */
const LEASE_MARGIN_MS = 30_000;
/** Of that margin, the time the job's read before the POST may wait for Postgres to come back. */
const READ_OUTAGE_MS = 10_000;
/** Kept in hand at the lease's end: an attempt's record waits for Postgres only while it would land before the lease runs out. */
const LEASE_SAFETY_MS = 5_000;

export interface WebhookSettings {
  /** The server secret each API key's signing key is derived from (WEBHOOK_SIGNING_SECRET). */
  signingSecret: string;
  /** Deliver to loopback, private and link-local addresses too (development, tests). @default false */
  allowPrivate: boolean;
  /** Attempts per job before its webhook is given up. @default 8 */
  maxAttempts: number;
  /** How often due webhooks are looked for when none were waiting. @default 500 */
  pollIntervalMs: number;
  /** Time one attempt may take, connection to answer. @default 10000 */
  timeoutMs: number;
  /** Delay before the second attempt; each later one waits 4× longer (with jitter). @default 5000 */
  retryBaseMs: number;
  /** Attempts in flight at once, per API process. @default 32 */
  concurrency: number;
  /** Lifetime of the presigned output URLs in a delivered job, in seconds. */
  outputUrlTtlS: number;
}

export interface WebhookDispatcher {
  start(): void;
  /** Stops claiming, then waits for the attempts in flight (each bounded by its timeout) to be recorded. */
  close(): Promise<void>;
}

/**
 * Posts finished jobs to their webhooks, signed, from the API side (never a
 * GPU worker). State lives in Postgres: any API replica claims due webhooks
 * (SKIP LOCKED, leased), so retries survive restarts and no attempt is made twice at once.
 */
export function createWebhookDispatcher(deps: {
  pool: Pool;
  tensors: Pick<TensorStore, 'locateTensor'>;
  logger: Logger;
  settings: WebhookSettings;
}): WebhookDispatcher {
  const { pool, tensors, settings } = deps;
  const logger = deps.logger.child({ component: 'webhooks' });
  const sender = createWebhookSender({ timeoutMs: settings.timeoutMs, allowPrivate: settings.allowPrivate });
  const stopping = new AbortController();
  const inFlight = new Set<Promise<void>>();
  let loop: Promise<void> | undefined;

  /** Runs a Postgres step again while Postgres is unreachable (a restart, a failover), for at most `forMs`. */
  function outlastOutage<T>(step: () => Promise<T>, forMs: number): Promise<T> {
    return pRetry(step, {
      retries: Number.POSITIVE_INFINITY,
      minTimeout: 100,
      maxTimeout: 2_000,
      maxRetryTime: Math.max(0, forMs),
      shouldRetry: ({ error }) => isDatabaseUnavailable(error) && !stopping.signal.aborted,
    });
  }

  async function attempt(claim: ClaimedWebhook): Promise<Omit<WebhookAttempt, 'outcome'>> {
    const base = { id: randomUUID(), jobId: claim.jobId, attempt: claim.attempt, url: claim.url };
    // A claim that Postgres answered just before it went away: its lease would hold the webhook back a timeout and more.
    const job = await outlastOutage(() => findJob(pool, claim.jobId, null), READ_OUTAGE_MS);
    if (!job) throw new Error(`job ${claim.jobId} no longer exists`);
    // Built per attempt: presigned output URLs are fresh each time.
    const body = JSON.stringify(await toJobDetail(job, tensors, settings.outputUrlTtlS, 'json'));
    const timestampS = Math.floor(Date.now() / 1000);
    const signature = signWebhook(deriveSigningKey(settings.signingSecret, job.ownerKeyId), job.id, timestampS, body);
    const response = await sender.post(
      claim.url,
      {
        'content-type': 'application/json',
        'user-agent': 'inferq-webhooks',
        [WebhookHeader.Id]: job.id,
        [WebhookHeader.Timestamp]: String(timestampS),
        [WebhookHeader.Signature]: signature,
      },
      body,
    );
    return { ...base, ...response };
  }

  async function deliver(claim: ClaimedWebhook, leaseEndsMs: number): Promise<void> {
    const log = logger.child({ jobId: claim.jobId, attempt: claim.attempt });
    try {
      const result = await attempt(claim);
      const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
      const outcome: WebhookAttempt['outcome'] = ok
        ? { state: 'delivered' }
        : claim.attempt >= settings.maxAttempts
          ? { state: 'given_up' }
          : { state: 'pending', retryInMs: webhookRetryDelayMs(claim.attempt, settings.retryBaseMs) };
      // An attempt made but not recorded is made again once the lease runs out (a delivered webhook twice): the
      // record waits out a Postgres outage while it would still land inside the lease.
      await outlastOutage(() => recordWebhookAttempts(pool, [{ ...result, outcome }]), leaseEndsMs - LEASE_SAFETY_MS - Date.now());
      const fields = { statusCode: result.statusCode, error: result.error, durationMs: result.durationMs };
      if (outcome.state === 'given_up') log.warn(fields, 'webhook given up');
      else log.debug({ ...fields, ...outcome }, 'webhook attempt recorded');
    } catch (err) {
      // Not recorded (the database or storage failed): the lease runs out and another attempt follows.
      log.warn({ err }, 'webhook attempt failed to run');
    }
  }

  const leaseMs = settings.timeoutMs + LEASE_MARGIN_MS;
  async function claim(limit: number): Promise<ClaimedWebhook[]> {
    try {
      return await claimDueWebhooks(pool, { limit, maxAttempts: settings.maxAttempts, leaseMs });
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'webhook claim failed');
      return [];
    }
  }

  async function run(): Promise<void> {
    while (!stopping.signal.aborted) {
      const free = settings.concurrency - inFlight.size;
      if (free === 0) {
        await Promise.race(inFlight);
        continue;
      }
      // Taken before the claim is sent: the lease in Postgres ends no earlier than this.
      const leaseEndsMs = Date.now() + leaseMs;
      const claimed = await claim(free);
      for (const c of claimed) {
        const delivery = deliver(c, leaseEndsMs).finally(() => inFlight.delete(delivery));
        inFlight.add(delivery);
      }
      // A full claim means more may be due: claim again at once.
      if (claimed.length < free) await sleep(settings.pollIntervalMs, undefined, { signal: stopping.signal }).catch(() => {});
    }
  }

  return {
    start() {
      loop ??= run();
    },
    async close() {
      stopping.abort();
      await loop;
      await Promise.all(inFlight);
      sender.close();
    },
  };
}
