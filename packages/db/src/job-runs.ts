import type { Priority, StoredTensor } from '@inferq/contracts';
import { packTensorRows, rowDataSql, unpackTensors } from './inline-tensors.ts';
import { prepared } from './prepared.ts';
import { copyRows, literal } from './copy-rows.ts';
import { CLOCK_SLACK_MS, daysOf, idRangeSql } from './job-id-range.ts';
import type { Pool } from './pool.ts';
import { liveJobIds } from './job-floors.ts';
import { batchJson, insertBatchSql, recordBatch, type NewBatch } from './batches.ts';

// The worker side of the jobs table: claiming, settling, reconciling.

export interface StartBatch {
  ids: string[];
  /** Jobs whose inputs the batch has already (carried in their queue entries): their inputs are not read. */
  carried?: ReadonlySet<string>;
  workerId: string;
  batchId: string;
  batchSize: number;
}

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

const EXPIRE = `status = 'expired', finished_at = now(), error_code = 'DEADLINE_EXCEEDED', error_message = 'still queued at its deadline'`;

/**
 * The rows a batch may write: a job still queued at the attempt before the
 * batch's (its claim was never written: the batch was quick) or running in
 * this very batch (its claim was written: markJobsRunning, or a takeover).
 * A job another batch has since marked, or finished, or moved to a later
 * attempt, is refused: the first attempt to finish stands, with its outputs
 * and provenance together (invariant 7).
 */
const fencedTo = (batchParam: string, claim: string): string =>
  `((jobs.status = 'queued' AND jobs.attempts = ${claim}.attempt - 1) OR (jobs.status = 'running' AND jobs.batch_id = ${batchParam}::uuid))`;

/** The columns a batch's mark or end sets from its run: attempt, batch, worker, start and queue time (kept when the mark set them). */
const runColumns = (claim: string, run: string): string =>
  `attempts = ${claim}.attempt, worker_id = ${run}.worker_id, batch_id = ${run}.batch_id, batch_size = ${run}.batch_size,
   started_at = CASE WHEN jobs.status = 'running' THEN jobs.started_at ELSE now() - make_interval(secs => ${run}.ran_ms / 1000) END,
   queue_ms = CASE WHEN jobs.status = 'running' THEN jobs.queue_ms
              ELSE GREATEST(0, (EXTRACT(EPOCH FROM (now() - make_interval(secs => ${run}.ran_ms / 1000) - jobs.created_at)) * 1000)::int) END`;

/** A batch run as one row of parameters `$n` (jsonb), for runColumns. */
const runRow = (param: string): string => `jsonb_to_record(${param}::jsonb) AS run(batch_id uuid, worker_id text, batch_size int, ran_ms float8)`;
const runJson = (run: BatchRun): string =>
  JSON.stringify({ batch_id: run.batchId, worker_id: run.workerId, batch_size: run.batchSize, ran_ms: Math.max(0, run.ranMs) });

/**
 * A batch statement's rows, named twice: the day range as literals (pruning, job-id-range.ts) and the ids as an
 * array parameter `$n` that the jobs' primary key answers. Joined on the recordset alone, the planner sizes the
 * scan of jobs from the partition's statistics, and a partition filled faster than autovacuum analyses it (a
 * queue's backlog, a new day's first hour) looked nearly empty: a hash of the whole day range for every batch
 * (~30 ms a batch with 20,000 jobs queued). With the ids as an index condition a batch reads its own rows, whatever
 * the statistics say.
 */
const batchRowsSql = (ids: readonly string[], param: string): string => `${idRangeSql(daysOf(ids), 'jobs.id')} AND jobs.id = ANY(${param}::uuid[])`;

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

/**
 * Gives claimed jobs back after a fault of the worker's own: queued again as
 * if this claim never happened (its attempt not counted), the worker added to
 * the job's node faults and the fault kept as its last error. Fenced like
 * completeJobs; returns the ids given back.
 */
export async function releaseJobs(
  pool: Pool,
  batchId: string,
  workerId: string,
  jobs: Array<JobClaim & { code: string; message: string }>,
): Promise<Set<string>> {
  if (jobs.length === 0) return new Set();
  const ids = jobs.map((j) => j.id);
  const { rows } = await pool.query<{ id: string }>(
    `UPDATE jobs SET status = 'queued', attempts = r.attempt - 1, started_at = NULL, error_code = r.code, error_message = r.message,
            node_faults = node_faults || $3::text
       FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, attempt int, code text, message text)
      WHERE jobs.id = r.id AND ${batchRowsSql(ids, '$4')} AND ${fencedTo('$2', 'r')}
      RETURNING jobs.id`,
    [JSON.stringify(jobs.map((j) => ({ ...j, message: j.message.slice(0, 2000) }))), batchId, workerId, ids],
  );
  return new Set(rows.map((r) => r.id));
}

/** Ends queued jobs whose deadline has passed, at most `limit` per call; returns them for their queue jobs to be removed. */
export async function expireOverdueJobs(pool: Pool, limit: number): Promise<Array<{ id: string; modelName: string }>> {
  const live = idRangeSql(await liveJobIds(pool));
  const { rows } = await pool.query<{ id: string; model_name: string }>(
    `UPDATE jobs SET ${EXPIRE}
      WHERE ${live} AND id IN (
        SELECT id FROM jobs WHERE ${live} AND status = 'queued' AND deadline_at <= now() ORDER BY deadline_at LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING id, model_name`,
    [limit],
  );
  return rows.map((r) => ({ id: r.id, modelName: r.model_name }));
}

export interface JobSuccess extends JobClaim {
  outputs: StoredTensor[];
  inferMs: number;
  /** Rows the job put along the batch dimension. */
  items: number;
  /** Its share of the batch's device time: inferMs × items ÷ the batch's items. */
  deviceMs: number;
}

/**
 * Writes a batch's results in one statement (the inline output bytes of all
 * the jobs as one binary parameter, each row taking its slice), with the
 * batch's claim when it was never written, and with `batch` its record
 * (recordBatch's insert, in the same statement: one commit a batch). Fenced to the batch's attempt
 * (fencedTo): a replay is a no-op, and a worker whose jobs were claimed again
 * elsewhere (its lock expired while it was cut off) cannot write over or
 * beside the attempt that finished first. Returns the ids written.
 */
export async function completeJobs(pool: Pool, run: BatchRun, results: JobSuccess[], batch?: NewBatch): Promise<Set<string>> {
  if (results.length === 0) {
    if (batch) await recordBatch(pool, batch);
    return new Set();
  }
  const packed = packTensorRows(results.map((r) => r.outputs));
  const ids = results.map((r) => r.id);
  const { rows } = await pool.query<{ id: string }>(
    prepared(
      `${batch ? `WITH batch AS (${insertBatchSql('$5')}) ` : ''}
       UPDATE jobs SET status = 'succeeded', ${runColumns('r', 'run')}, outputs = r.outputs, output_data = ${rowDataSql('$3', 'r')},
            infer_ms = r.infer_ms, items = r.items, device_ms = r.device_ms, finished_at = now(), error_code = NULL, error_message = NULL
       FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, attempt int, outputs jsonb, infer_ms float8, items int, device_ms float8, data_at int, data_len int),
            ${runRow('$2')}
      WHERE jobs.id = r.id AND ${batchRowsSql(ids, '$4')} AND ${fencedTo('run.batch_id', 'r')}
      RETURNING jobs.id`,
      [
        JSON.stringify(
          results.map((r, i) => {
            const { tensors, dataAt, dataLen } = packed.rows[i]!;
            return {
              id: r.id,
              attempt: r.attempt,
              outputs: tensors,
              infer_ms: r.inferMs,
              items: r.items,
              device_ms: r.deviceMs,
              data_at: dataAt,
              data_len: dataLen,
            };
          }),
        ),
        runJson(run),
        packed.data,
        ids,
        ...(batch ? [batchJson(batch)] : []),
      ],
    ),
  );
  return new Set(rows.map((r) => r.id));
}

/**
 * Ends claimed jobs that cannot finish by their deadline, before they run:
 * `expired` with DEADLINE_EXCEEDED, like a job still queued at its deadline.
 */
export async function expireRunningJobs(pool: Pool, run: BatchRun, jobs: Array<JobClaim & { message: string }>): Promise<void> {
  if (jobs.length === 0) return;
  const ids = jobs.map((j) => j.id);
  await pool.query(
    `UPDATE jobs SET status = 'expired', ${runColumns('e', 'run')}, finished_at = now(), error_code = 'DEADLINE_EXCEEDED', error_message = e.message
       FROM jsonb_to_recordset($1::jsonb) AS e(id uuid, attempt int, message text), ${runRow('$2')}
      WHERE jobs.id = e.id AND ${batchRowsSql(ids, '$3')} AND ${fencedTo('run.batch_id', 'e')}`,
    [JSON.stringify(jobs), runJson(run), ids],
  );
}

export interface JobFailure {
  id: string;
  code: string;
  message: string;
  /** false: record the error but leave the job queued for its next attempt. */
  final: boolean;
  /** The attempt its batch ran (see failJobs' `run`). */
  attempt?: number;
}

/**
 * Records failures. With `run`, the batch whose attempts failed: each is
 * written with the batch's provenance only while the job is still that
 * attempt's (fenced like completeJobs). Without it (a payload no batch could
 * take), any queued or running job takes it.
 */
export async function failJobs(pool: Pool, failures: JobFailure[], run?: BatchRun): Promise<void> {
  if (failures.length === 0) return;
  const rows = failures.map((f) => ({ id: f.id, code: f.code, message: f.message.slice(0, 2000), final: f.final, attempt: f.attempt ?? null }));
  const ids = rows.map((f) => f.id);
  const range = batchRowsSql(ids, run ? '$3' : '$2');
  const outcome = `status = CASE WHEN f.final THEN 'failed' ELSE 'queued' END, finished_at = CASE WHEN f.final THEN now() ELSE NULL END,
            error_code = f.code, error_message = f.message`;
  const recordset = 'jsonb_to_recordset($1::jsonb) AS f(id uuid, code text, message text, final boolean, attempt int)';
  await pool.query(
    run
      ? `UPDATE jobs SET ${outcome}, ${runColumns('f', 'run')} FROM ${recordset}, ${runRow('$2')}
          WHERE jobs.id = f.id AND ${range} AND ${fencedTo('run.batch_id', 'f')}`
      : `UPDATE jobs SET ${outcome} FROM ${recordset} WHERE jobs.id = f.id AND ${range} AND jobs.status IN ('queued', 'running')`,
    run ? [JSON.stringify(rows), runJson(run), ids] : [JSON.stringify(rows), ids],
  );
}

export interface UnfinishedJob {
  id: string;
  modelName: string;
  modelVersion: number;
  priority: Priority;
  createdAt: Date;
  deadlineAt: Date | null;
  ownerKeyId: string;
}

export interface UnfinishedJobsPage {
  /** Only jobs at least this old: younger ones may still be between insert and enqueue. */
  minAgeMs: number;
  /** Only jobs created after this (the reconciler's incremental window); unset for every job. */
  createdAfter?: Date;
  /** Keyset cursor: the last row of the previous page. */
  after?: { createdAt: Date; id: string };
  limit: number;
}

/** Queued or running jobs, oldest first, a page at a time: candidates for re-enqueueing. */
export async function findUnfinishedJobs(pool: Pool, page: UnfinishedJobsPage): Promise<UnfinishedJob[]> {
  const since = page.after?.createdAt ?? page.createdAfter;
  const ids = since ? { fromMs: since.getTime() - CLOCK_SLACK_MS, toMs: Date.now() + CLOCK_SLACK_MS } : await liveJobIds(pool);
  const { rows } = await pool.query(
    `SELECT id, model_name, model_version, priority, created_at, deadline_at, owner_key_id FROM jobs
      WHERE ${idRangeSql(ids)} AND status IN ('queued', 'running') AND created_at < now() - make_interval(secs => $1::float8 / 1000)
        AND ($2::timestamptz IS NULL OR created_at > $2)
        AND ($3::timestamptz IS NULL OR (created_at, id) > ($3, $4::uuid))
      ORDER BY created_at, id LIMIT $5`,
    [page.minAgeMs, page.createdAfter ?? null, page.after?.createdAt ?? null, page.after?.id ?? null, page.limit],
  );
  return rows.map((r) => ({
    id: r.id,
    modelName: r.model_name,
    modelVersion: r.model_version,
    priority: r.priority,
    createdAt: r.created_at,
    deadlineAt: r.deadline_at,
    ownerKeyId: r.owner_key_id,
  }));
}

/**
 * Candidates for moving up a class: each key's `perKey` oldest queued jobs
 * of priority normal or low created before `olderThan`, per model, oldest
 * first within a key.
 */
export async function findAgedQueuedJobs(
  pool: Pool,
  o: { olderThan: Date; perKey: number },
): Promise<Array<{ id: string; modelName: string; priority: Priority; ownerKeyId: string; createdAt: Date }>> {
  const { rows } = await pool.query(
    `SELECT id, model_name, priority, owner_key_id, created_at FROM (
       SELECT id, model_name, priority, owner_key_id, created_at,
              row_number() OVER (PARTITION BY model_name, owner_key_id ORDER BY created_at, id) AS rank
         FROM jobs WHERE ${idRangeSql(await liveJobIds(pool))} AND status = 'queued' AND created_at < $1 AND priority IN ('normal', 'low')) aged
      WHERE rank <= $2
      ORDER BY model_name, owner_key_id, created_at, id`,
    [o.olderThan, o.perKey],
  );
  return rows.map((r) => ({ id: r.id, modelName: r.model_name, priority: r.priority, ownerKeyId: r.owner_key_id, createdAt: r.created_at }));
}

/** The input headers of the given jobs, by id (name, datatype, shape, bytes; not where the bytes are): what a re-enqueued job's batch key is made of. */
export async function readJobInputs(pool: Pool, ids: string[]): Promise<Map<string, StoredTensor[]>> {
  const { rows } = await pool.query<{ id: string; inputs: StoredTensor[] }>(
    `SELECT id, inputs FROM jobs WHERE id = ANY($1::uuid[]) AND ${idRangeSql(daysOf(ids))}`,
    [ids],
  );
  return new Map(rows.map((r) => [r.id, r.inputs.map(({ name, datatype, shape, bytes }) => ({ name, datatype, shape, bytes }))]));
}
