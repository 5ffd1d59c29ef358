import { daysOf, idRangeSql } from '../sql/job-id-range.ts';

// What every write of a batch shares: the claim it is fenced to, the run it records, and how it names its rows.

/** A job as the batch that claimed it knows it: the attempt it runs (the row's attempts once this attempt is written). */
export interface JobClaim {
  id: string;
  attempt: number;
}

/** What a batch writes with a job's running mark or its end: which batch ran it, where and when it started. */
export interface BatchRun {
  batchId: string;
  workerId: string;
  batchSize: number;
  /** Milliseconds since the claim, on the worker's clock: the row's started_at is Postgres's now() less this. */
  ranMs: number;
}

export const EXPIRE = `status = 'expired', finished_at = now(), error_code = 'DEADLINE_EXCEEDED', error_message = 'still queued at its deadline'`;

/**
 * The rows a batch may write: a job still queued at the attempt before the
 * batch's (its claim was never written: the batch was quick) or running in
 * this very batch (its claim was written: markJobsRunning, or a takeover).
 * A job another batch has since marked, or finished, or moved to a later
 * attempt, is refused: the first attempt to finish stands, with its outputs
 * and provenance together (invariant 7).
 */
export const fencedTo = (batchParam: string, claim: string): string =>
  `((jobs.status = 'queued' AND jobs.attempts = ${claim}.attempt - 1) OR (jobs.status = 'running' AND jobs.batch_id = ${batchParam}::uuid))`;

/** The columns a batch's mark or end sets from its run: attempt, batch, worker, start and queue time (kept when the mark set them). */
export const runColumns = (claim: string, run: string): string =>
  `attempts = ${claim}.attempt, worker_id = ${run}.worker_id, batch_id = ${run}.batch_id, batch_size = ${run}.batch_size,
   started_at = CASE WHEN jobs.status = 'running' THEN jobs.started_at ELSE now() - make_interval(secs => ${run}.ran_ms / 1000) END,
   queue_ms = CASE WHEN jobs.status = 'running' THEN jobs.queue_ms
              ELSE GREATEST(0, (EXTRACT(EPOCH FROM (now() - make_interval(secs => ${run}.ran_ms / 1000) - jobs.created_at)) * 1000)::int) END`;

/** A batch run as one row of parameters `$n` (jsonb), for runColumns. */
export const runRow = (param: string): string => `jsonb_to_record(${param}::jsonb) AS run(batch_id uuid, worker_id text, batch_size int, ran_ms float8)`;
export const runJson = (run: BatchRun): string =>
  JSON.stringify({ batch_id: run.batchId, worker_id: run.workerId, batch_size: run.batchSize, ran_ms: Math.max(0, run.ranMs) });

/**
 * A batch statement's rows, named twice: the day range as literals (pruning, job-id-range.ts) and the ids as an
 * array parameter `$n` that the jobs' primary key answers. Joined on the recordset alone, the planner sizes the
 * scan of jobs from the partition's statistics, and a partition filled faster than autovacuum analyses it (a
 * queue's backlog, a new day's first hour) looked nearly empty: a hash of the whole day range for every batch
 * (~30 ms a batch with 20,000 jobs queued). With the ids as an index condition a batch reads its own rows, whatever
 * the statistics say.
 */
export const batchRowsSql = (ids: readonly string[], param: string): string => `${idRangeSql(daysOf(ids), 'jobs.id')} AND jobs.id = ANY(${param}::uuid[])`;
