import type { WebhookDelivery, WebhookState } from '@inferq/contracts';
import type { Pool } from '../connection/pool.ts';
import { liveJobIds } from '../retention/job-floors.ts';
import { daysOf, idRangeSql } from '../sql/job-id-range.ts';

// A job's webhook is due once the job has a URL and a finished_at and no
// webhook_state yet, at COALESCE(webhook_next_at, finished_at): whatever
// finishes a job (worker, cancel, expiry) needs no webhook code of its own.
// The predicate and expression match jobs_webhook_due_idx (migration 0006).
const PENDING = `webhook_url IS NOT NULL AND finished_at IS NOT NULL AND webhook_state IS NULL`;
const DUE_AT = `COALESCE(webhook_next_at, finished_at)`;

export interface ClaimedWebhook {
  jobId: string;
  url: string;
  /** 1 for the first attempt. */
  attempt: number;
}

/**
 * Claims up to `limit` due webhooks for one attempt each, oldest first: the
 * attempt count goes up and the row is leased (not due again) for `leaseMs`,
 * so several API replicas never deliver the same attempt (SKIP LOCKED). A row
 * that already used `maxAttempts` (its last attempt's process died) is given up instead.
 */
export async function claimDueWebhooks(pool: Pool, options: { limit: number; maxAttempts: number; leaseMs: number }): Promise<ClaimedWebhook[]> {
  const live = await liveJobIds(pool);
  const { rows } = await pool.query<{ id: string; webhook_url: string; webhook_attempts: number }>(
    `WITH due AS (
       SELECT id FROM jobs WHERE ${idRangeSql(live)} AND ${PENDING} AND ${DUE_AT} <= now()
        ORDER BY ${DUE_AT} LIMIT $1 FOR UPDATE SKIP LOCKED),
     claimed AS (
       UPDATE jobs SET
              webhook_attempts = jobs.webhook_attempts + CASE WHEN jobs.webhook_attempts < $2 THEN 1 ELSE 0 END,
              webhook_state = CASE WHEN jobs.webhook_attempts < $2 THEN NULL ELSE 'given_up' END,
              webhook_next_at = CASE WHEN jobs.webhook_attempts < $2 THEN now() + $3 * interval '1 millisecond' END
         FROM due WHERE jobs.id = due.id AND ${idRangeSql(live, 'jobs.id')}
       RETURNING jobs.id, jobs.webhook_url, jobs.webhook_attempts, jobs.webhook_state)
     SELECT id, webhook_url, webhook_attempts FROM claimed WHERE webhook_state IS NULL`,
    [options.limit, options.maxAttempts, options.leaseMs],
  );
  return rows.map((r) => ({ jobId: r.id, url: r.webhook_url, attempt: r.webhook_attempts }));
}

export interface WebhookAttempt {
  id: string;
  jobId: string;
  attempt: number;
  url: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** The job's webhook afterwards: delivered, given up, or pending with the next attempt in `retryInMs`. */
  outcome: { state: 'delivered' | 'given_up' } | { state: 'pending'; retryInMs: number };
}

/**
 * Records attempts and settles each job's webhook. A job whose lease ran out
 * and was claimed again meanwhile keeps the newer attempt's state.
 */
export async function recordWebhookAttempts(pool: Pool, attempts: WebhookAttempt[]): Promise<void> {
  await pool.query(
    `WITH a AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS a(id uuid, job_id uuid, attempt int, url text, status_code int, error text,
              duration_ms int, state text, retry_in_ms int)),
     recorded AS (
       INSERT INTO webhook_deliveries (id, job_id, attempt, url, status_code, error, duration_ms)
       SELECT id, job_id, attempt, url, status_code, error, duration_ms FROM a)
     UPDATE jobs SET webhook_state = a.state, webhook_next_at = now() + a.retry_in_ms * interval '1 millisecond'
       FROM a WHERE jobs.id = a.job_id AND ${idRangeSql(daysOf(attempts.map((a) => a.jobId)), 'jobs.id')}
        AND jobs.webhook_attempts = a.attempt AND jobs.webhook_state IS NULL`,
    [
      JSON.stringify(
        attempts.map((a) => ({
          id: a.id,
          job_id: a.jobId,
          attempt: a.attempt,
          url: a.url,
          status_code: a.statusCode,
          error: a.error,
          duration_ms: a.durationMs,
          state: a.outcome.state === 'pending' ? null : a.outcome.state,
          retry_in_ms: a.outcome.state === 'pending' ? a.outcome.retryInMs : null,
        })),
      ),
    ],
  );
}

export interface JobWebhookRecord {
  url: string | null;
  state: WebhookState | null;
  attempts: number;
  nextAttemptAt: Date | null;
  deliveries: WebhookDelivery[];
}

/** A job's webhook state and every attempt, oldest first; ownerKeyId null means any owner (admin). */
export async function findJobWebhook(pool: Pool, jobId: string, ownerKeyId: string | null): Promise<JobWebhookRecord | undefined> {
  const { rows } = await pool.query(
    `SELECT webhook_url, webhook_attempts, CASE WHEN webhook_url IS NOT NULL THEN COALESCE(webhook_state, 'pending') END AS state,
            CASE WHEN ${PENDING} THEN ${DUE_AT} END AS next_attempt_at,
            d.id, d.attempt, d.url, d.status_code, d.error, d.duration_ms, d.created_at
       FROM jobs LEFT JOIN webhook_deliveries d ON d.job_id = jobs.id
      WHERE jobs.id = $1 AND ${idRangeSql(daysOf([jobId]), 'jobs.id')} AND ($2::uuid IS NULL OR jobs.owner_key_id = $2)
      ORDER BY d.attempt, d.created_at`,
    [jobId, ownerKeyId],
  );
  const first = rows[0];
  if (!first) return undefined;
  return {
    url: first.webhook_url,
    state: first.state,
    attempts: first.webhook_attempts,
    nextAttemptAt: first.next_attempt_at,
    deliveries: rows
      .filter((r) => r.id !== null)
      .map((r) => ({
        id: r.id,
        attempt: r.attempt,
        url: r.url,
        statusCode: r.status_code,
        error: r.error,
        durationMs: r.duration_ms,
        createdAt: r.created_at.toISOString(),
      })),
  };
}
