import type { Pool } from '@inferq/db';
import { LOAD_ID_KEY, type SteadyLoad, type SteadyLoadResult } from './steady-load.ts';
import { waitFor } from './wait-for.ts';

/**
 * What a fault test proves, from both ends: every reply the submitters got
 * (steady load) and every job outcome Postgres recorded (a trigger logs each
 * transition to `succeeded`, so a result written twice shows up even though
 * the second write would look like the first).
 */
export interface LedgerReport {
  submitted: number;
  accepted: number;
  /** 503s, each with Retry-After. */
  refused: number;
  completed: number;
  /** Accepted jobs that ended failed, canceled or expired (each has a stored error or reason). */
  failed: number;
  /** Accepted jobs with no row, or still queued or running at the end. */
  lost: number;
  /**
   * Jobs whose result was written more than once, plus submissions the load
   * was refused (or got no reply for) that were recorded anyway: each of
   * those would run beside the client's retry.
   */
  duplicated: number;
  /** Accepted jobs claimed more than once (`attempts` > 1): inference ran again, though only one result was stored. */
  rerun: number;
  /** The longest any accepted job took from submit to its end (ms): how long a job lost from the queue waited for the reconciler. */
  slowestJobMs: number;
}

/**
 * Logs every write of a succeeded result in the test's schema: any UPDATE that
 * sets `status` to succeeded, a rewrite of an already succeeded row included.
 */
export async function installCompletionLog(pool: Pool): Promise<void> {
  await pool.query(`
    CREATE TABLE IF NOT EXISTS test_completions (job_id uuid NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp());
    CREATE OR REPLACE FUNCTION test_log_completion() RETURNS trigger AS $$
      BEGIN INSERT INTO test_completions (job_id) VALUES (NEW.id); RETURN NEW; END $$ LANGUAGE plpgsql;
    DROP TRIGGER IF EXISTS test_log_completion ON jobs;
    CREATE TRIGGER test_log_completion AFTER UPDATE OF status ON jobs
      FOR EACH ROW WHEN (NEW.status = 'succeeded') EXECUTE FUNCTION test_log_completion();`);
}

/** Counts the outcome of the accepted jobs (the completion log must be installed before they run). */
export async function auditJobs(pool: Pool, load: Pick<SteadyLoadResult, 'loadId' | 'submitted' | 'accepted' | 'refused'>): Promise<LedgerReport> {
  const {
    rows: [counts],
  } = await pool.query<{ completed: number; failed: number; rerun: number; slowest_ms: number }>(
    `SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS completed,
            count(*) FILTER (WHERE status IN ('failed', 'canceled', 'expired'))::int AS failed,
            count(*) FILTER (WHERE attempts > 1)::int AS rerun,
            coalesce(round(extract(epoch FROM max(finished_at - created_at)) * 1000), 0)::int AS slowest_ms
       FROM jobs WHERE id = ANY($1::uuid[])`,
    [load.accepted],
  );
  const {
    rows: [dup],
  } = await pool.query<{ n: number }>(
    `SELECT (SELECT count(*) FROM (SELECT job_id FROM test_completions GROUP BY job_id HAVING count(*) > 1) d)::int
          + (SELECT count(*) FROM jobs WHERE metadata->>$2 = $3 AND NOT id = ANY($1::uuid[]))::int AS n`,
    [load.accepted, LOAD_ID_KEY, load.loadId],
  );
  const { completed, failed, rerun, slowest_ms: slowestJobMs } = counts!;
  return {
    submitted: load.submitted,
    accepted: load.accepted.length,
    refused: load.refused,
    completed,
    failed,
    lost: load.accepted.length - completed - failed,
    duplicated: dup!.n,
    rerun,
    slowestJobMs,
  };
}

export const formatLedger = (what: string, r: LedgerReport): string =>
  `${what}: submitted ${r.submitted}, accepted ${r.accepted}, refused ${r.refused} (503), completed ` +
  `${r.completed}, failed ${r.failed}, lost ${r.lost}, duplicated ${r.duplicated}, run twice ${r.rerun}`;

/**
 * The end of a fault test: stops the load, gives every accepted job up to
 * `timeoutMs` to finish, then counts and prints the ledger. A job still
 * unfinished then counts as lost (the caller asserts, so the counts print first).
 */
export async function settleLoad(pool: Pool, load: SteadyLoad, what: string, timeoutMs = 30_000): Promise<{ result: SteadyLoadResult; report: LedgerReport }> {
  const result = await load.stop();
  await waitFor(
    async () =>
      (
        await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) AND status NOT IN ('queued', 'running')", [
          result.accepted,
        ])
      ).rows[0]!.n === result.accepted.length,
    { timeoutMs, intervalMs: 200, what: 'every accepted job to finish' },
  ).catch(() => undefined);
  const report = await auditJobs(pool, result);
  const slowestMs = Math.round(result.latenciesMs.reduce((a, b) => Math.max(a, b), 0));
  console.log(
    `${formatLedger(what, report)}; 503 codes ${JSON.stringify(result.refusedCodes)}; longest 503 run ${result.longestRefusalMs} ms; ` +
      `slowest reply ${slowestMs} ms; slowest job ${report.slowestJobMs} ms`,
  );
  if (result.violations.length > 0) console.log(`${what}: ${result.violations.length} broken replies, first: ${result.violations.slice(0, 5).join(' | ')}`);
  return { result, report };
}
