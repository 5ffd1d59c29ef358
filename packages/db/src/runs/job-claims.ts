import type { StoredTensor } from '@inferq/contracts';
import type { Pool } from '../connection/pool.ts';
import { copyRows, literal } from '../sql/copy-rows.ts';
import { unpackTensors } from '../sql/inline-tensors.ts';
import { daysOf, idRangeSql } from '../sql/job-id-range.ts';
import { prepared } from '../sql/prepared.ts';
import { batchRowsSql, EXPIRE, fencedTo, runColumns, runJson, runRow, type BatchRun, type JobClaim } from './run-fencing.ts';

// A batch's claim on its jobs: the read that claims them, the rows it left out, and the running mark that writes it.

export interface StartBatch {
  ids: string[];
  /** Jobs whose inputs the batch has already (carried in their queue entries): their inputs are not read. */
  carried?: ReadonlySet<string>;
  workerId: string;
  batchId: string;
  batchSize: number;
}

/**
 * Claims a batch's jobs: returns those still worth running, each with its
 * inputs (but for the `carried` ones: read out of TOAST, a 12 KiB input is
 * most of a claim's cost) and the attempt the batch runs. A claim writes nothing for a queued
 * job (the lease is the queue's lock in Redis; a batch still running after a
 * while marks its jobs running, markJobsRunning); the batch's writes are
 * fenced to that attempt. Jobs canceled or already finished (a replay after a
 * crash) are left out, so a result is never computed twice into a finished
 * job; queued jobs past their deadline end `expired` here instead of running;
 * a job some other batch marked running (that batch's lock expired) is taken
 * over, written as this batch's at once.
 */
export async function startJobs(pool: Pool, b: StartBatch): Promise<Map<string, ClaimedJobRow>> {
  if (!Number.isInteger(b.batchSize)) throw new TypeError(`batch size ${b.batchSize} is not an integer`);
  const uncarried = b.carried ? b.ids.filter((id) => !b.carried!.has(id)) : b.ids;
  const rows = uncarried.length === 0 ? await readFencing(pool, b.ids) : await readWithInputs(pool, b.ids, uncarried);
  const jobs = new Map<string, ClaimedJobRow>();
  const rare = rows.filter((r) => r.rare).map((r) => ({ id: r.id, read: r.read }));
  for (const r of rows) jobs.set(r.id, { attempt: r.read + 1, ...(r.inputs ? { inputs: r.inputs } : {}), nodeFaults: r.nodeFaults });
  if (rare.length > 0) await settleRareClaims(pool, b, rare, jobs);
  return jobs;
}

/**
 * Of the ids a claim left out, those with no row at all (any status): jobs the record lost (lost-jobs.ts), not
 * canceled or finished ones. Pruned to the ids' days like a claim (batchRowsSql); only asked when a claim returned
 * fewer rows than its batch's entries.
 */
export async function findJobsWithoutRow(pool: Pool, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await pool.query<{ id: string }>(`SELECT id::text FROM jobs WHERE ${batchRowsSql(ids, '$1')}`, [ids]);
  const present = new Set(rows.map((r) => r.id));
  return ids.filter((id) => !present.has(id.toLowerCase()));
}

/** A claimed row as read: the attempts it had, whether it is a rare case (running, or past its deadline), its inputs where read. */
interface ClaimRead {
  id: string;
  read: number;
  rare: boolean;
  inputs?: StoredTensor[];
  nodeFaults: string[];
}

const CLAIMABLE = `status IN ('queued', 'running')`;
const RARE = `(status = 'running' OR coalesce(deadline_at <= now(), false))`;

/**
 * A batch whose every input it holds reads only the columns that fence it: a named statement, parsed and planned once a
 * connection and day, and one entry of pg_stat_statements; the COPY below is parsed and planned on every call, and
 * its literal ids make each call an entry of its own there. On Postgres 18 with pg_stat_statements loaded the
 * worker's backends spent 43 µs a job with the COPY, 33 with this (docs/performance.md).
 */
async function readFencing(pool: Pool, ids: string[]): Promise<ClaimRead[]> {
  const { rows } = await pool.query<{ id: string; attempts: number; rare: boolean; node_faults: string[] }>(
    prepared(`SELECT id::text, attempts, ${RARE} AS rare, node_faults FROM jobs WHERE ${batchRowsSql(ids, '$1')} AND ${CLAIMABLE}`, [ids]),
  );
  return rows.map((r) => ({ id: r.id, read: r.attempts, rare: r.rare, nodeFaults: r.node_faults }));
}

/**
 * The claim that reads inputs: a binary COPY (copy-rows.ts), so the inputs' bytes come as they are, not as hex; its
 * values are literals, as COPY takes no parameters. The inputs of the jobs the batch holds already are left unread
 * (a CASE keeps their TOASTed values closed).
 */
async function readWithInputs(pool: Pool, ids: string[], uncarried: string[]): Promise<ClaimRead[]> {
  // The day range besides the literal ids, so that the planner prunes before it plans, whatever it makes of the array.
  const idList = (list: readonly string[]) => `ARRAY[${list.map(literal).join(',')}]::uuid[]`;
  const ofUncarried = (column: string) => (uncarried.length === ids.length ? column : `CASE WHEN id = ANY(${idList(uncarried)}) THEN ${column} END`);
  const rows = await copyRows(
    pool,
    `SELECT id::text, attempts::int4, ${RARE}::int4, ${ofUncarried('inputs::text')}, ${ofUncarried('input_data')}, array_to_json(node_faults)::text
       FROM jobs WHERE id = ANY(${idList(ids)}) AND ${idRangeSql(daysOf(ids))} AND ${CLAIMABLE}`,
  );
  return rows.map(([id, attempts, rare, inputs, data, faults]) => ({
    id: id!.toString(),
    read: attempts!.readInt32BE(0),
    rare: rare!.readInt32BE(0) === 1,
    ...(inputs ? { inputs: unpackTensors(JSON.parse(inputs.toString()) as StoredTensor[], data) } : {}),
    nodeFaults: JSON.parse(faults!.toString()) as string[],
  }));
}

/**
 * The claim's rare cases, fenced to the attempt read: a queued job past its
 * deadline ends expired; a job another batch marked running is taken over by
 * this one (the statement a claim always was before claims became reads).
 * Jobs that changed since the read are dropped from the claim.
 */
async function settleRareClaims(pool: Pool, b: StartBatch, rare: Array<{ id: string; read: number }>, jobs: Map<string, ClaimedJobRow>) {
  const ids = rare.map((j) => j.id);
  const { rows } = await pool.query<{ id: string; taken: boolean }>(
    `WITH r AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, read int)),
          expired AS (
            UPDATE jobs SET ${EXPIRE} FROM r
             WHERE jobs.id = r.id AND ${batchRowsSql(ids, '$5')} AND jobs.attempts = r.read
               AND jobs.status = 'queued' AND jobs.deadline_at <= now()
             RETURNING jobs.id),
          taken AS (
            UPDATE jobs SET started_at = now(), attempts = r.read + 1, worker_id = $2, batch_id = $3::uuid, batch_size = $4,
                   queue_ms = GREATEST(0, (EXTRACT(EPOCH FROM (now() - jobs.created_at)) * 1000)::int)
              FROM r
             WHERE jobs.id = r.id AND ${batchRowsSql(ids, '$5')} AND jobs.attempts = r.read
               AND jobs.status = 'running'
             RETURNING jobs.id)
     SELECT id::text, false AS taken FROM expired UNION ALL SELECT id::text, true FROM taken`,
    [JSON.stringify(rare.map((j) => ({ id: j.id, read: j.read }))), b.workerId, b.batchId, b.batchSize, ids],
  );
  const taken = new Set(rows.filter((r) => r.taken).map((r) => r.id));
  for (const j of rare) if (!taken.has(j.id)) jobs.delete(j.id);
}

export interface ClaimedJobRow {
  /** The attempt this claim runs: the row's attempts once a write of this batch stands. */
  attempt: number;
  /** Absent for a job the batch carried its inputs for (StartBatch.carried). */
  inputs?: StoredTensor[];
  /** Workers that gave the job back for a fault of their own. */
  nodeFaults: string[];
}

/**
 * Writes a batch's claim on its jobs (status running, with the batch, worker
 * and start): what a batch that has run for a while does, so that a client
 * sees the job running. Fenced like a completion; returns the ids marked.
 */
export async function markJobsRunning(pool: Pool, run: BatchRun, jobs: JobClaim[]): Promise<Set<string>> {
  if (jobs.length === 0) return new Set();
  const ids = jobs.map((j) => j.id);
  const { rows } = await pool.query<{ id: string }>(
    `UPDATE jobs SET status = 'running', ${runColumns('c', 'run')}
       FROM jsonb_to_recordset($1::jsonb) AS c(id uuid, attempt int), ${runRow('$2')}
      WHERE jobs.id = c.id AND ${batchRowsSql(ids, '$3')} AND jobs.status = 'queued' AND jobs.attempts = c.attempt - 1
      RETURNING jobs.id`,
    [JSON.stringify(jobs), runJson(run), ids],
  );
  return new Set(rows.map((r) => r.id));
}
