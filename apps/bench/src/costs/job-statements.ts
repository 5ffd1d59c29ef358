/**
 * What each statement of a job's way through Postgres costs, batch by batch,
 * on a schema of its own: the group insert (submit), the claim, the running
 * mark and the completion (with the batch's record), each timed (and the claim of jobs whose queue entries carry their
 * inputs, which reads none) and its WAL read
 * from pg_current_wal_lsn() around it (a quiet server: nothing else writes).
 * `node --import tsx apps/bench/src/costs/job-statements.ts [batches] [batch size] [input bytes] [backlog]`
 * with DATABASE_URL set; prints one row per statement: wall time, its backend's CPU (Postgres on this machine) and WAL, a job.
 * `backlog`: every batch's jobs are inserted first, into a partition analysed while it was empty (a new day's
 * partition, or any filled faster than autovacuum analyses it), then claimed and completed batch by batch, as a
 * worker drains a queue: the statements' plans must not trust the partition's statistics.
 * `walmap` (after `backlog` or in its place): then each statement's WAL a job by relation (wal-by-relation.ts).
 * `hot` (or `hot=fillfactor`, default 70): the same statements on step 5's `jobs` (architecture.md), measured before it is built: the work-list
 * indexes on the columns a completion sets (status, finished_at, batch_id, outputs) dropped and the partitions'
 * fillfactor lowered, so the completion can be a HOT update; prints the share of completions that were.
 * `purge`: then, after a CHECKPOINT (one always lies between a job's completion and its purge, JOB_RETENTION_S later), every
 * job purged to a tombstone by the retention sweep's statement in its groups (500): the WAL a job's end writes (with
 * `walmap`, the purge's alone is mapped).
 */
import { randomUUID } from 'node:crypto';
import {
  completeJobs,
  createPool,
  ensureJobPartitions,
  insertJobs,
  markJobsRunning,
  purgeJobs,
  runMigrations,
  startJobs,
  type BatchRun,
  type Pool,
} from '@inferq/db';
import { newTestJob } from '@inferq/test-utils';
import { loadBenchEnv } from '../bench-env.ts';
import { median } from '../stats.ts';
import { PURGE_GROUP } from './later-wal.ts';
import { processCpuSeconds } from './process-cpu.ts';
import { walByRelation } from './wal-by-relation.ts';

const [batches = 200, size = 32, inputBytes = 12_288] = process.argv.slice(2, 5).map(Number);
const backlog = process.argv.slice(5).includes('backlog');
const walMap = process.argv.slice(5).includes('walmap');
const purge = process.argv.slice(5).includes('purge');
const hotArg = process.argv.slice(5).find((a) => /^hot(=\d+)?$/.test(a));
const hot = hotArg !== undefined;
/** The indexes step 5 moves out of `jobs`: each covers a column the completion sets, so no completion can be HOT beside them. */
const WORK_LIST_INDEXES = [
  'jobs_unfinished_idx',
  'jobs_batch_id_idx',
  'jobs_purge_candidates_idx',
  'jobs_input_drop_candidates_idx',
  'jobs_finished_at_idx',
  'jobs_queued_deadline_idx',
  'jobs_webhook_due_idx',
  'jobs_response_cache_idx',
  'jobs_cache_hit_keys_idx',
];
/** Room left on each page at insert for the completion's new row version (`hot=N` sets it; a row here is ~330 B beside its TOASTed input). */
const HOT_FILLFACTOR = Number(hotArg?.split('=')[1] ?? 70);
const env = loadBenchEnv();
if (!env.DATABASE_URL) throw new Error('DATABASE_URL is not set');
const schema = `stmt_${randomUUID().slice(0, 8)}`;
const admin = createPool({ url: env.DATABASE_URL, schema: 'public', max: 1 });
await admin.query(`CREATE SCHEMA ${schema}`);
// One connection: its backend's CPU (/proc, when Postgres runs here) is the statements' own.
const pool = createPool({ url: env.DATABASE_URL, schema, max: 1 });

const walLsn = async (p: Pool): Promise<string> => (await p.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0]!.lsn;
const walBytes = async (p: Pool, from: string): Promise<number> =>
  Number((await p.query<{ n: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1)::bigint AS n', [from])).rows[0]!.n);

const backendPid = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
const samples = new Map<string, Array<{ us: number; wal: number; cpuS: number | null; jobs: number; from: string; to: string }>>();
async function measure<T>(name: string, jobs: number, run: () => Promise<T>): Promise<T> {
  const from = await walLsn(admin);
  const cpuBefore = processCpuSeconds(backendPid);
  const started = performance.now();
  const result = await run();
  const us = ((performance.now() - started) * 1000) / jobs;
  const cpuAfter = processCpuSeconds(backendPid);
  const wal = (await walBytes(admin, from)) / jobs;
  const to = await walLsn(admin);
  const cpuS = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
  samples.set(name, [...(samples.get(name) ?? []), { us, wal, cpuS, jobs, from, to }]);
  return result;
}
/** The backend's CPU over every run of a statement, a job (the clock ticks are 10 ms: only a sum is worth reading). */
const cpuUsPerJob = (s: Array<{ cpuS: number | null; jobs: number }>): string =>
  s.some((x) => x.cpuS === null) ? 'n/a' : ((s.reduce((n, x) => n + x.cpuS!, 0) * 1e6) / s.reduce((n, x) => n + x.jobs, 0)).toFixed(1);

try {
  await runMigrations(pool);
  await ensureJobPartitions(pool, { aheadDays: 1 });
  if (hot) {
    for (const index of WORK_LIST_INDEXES) await pool.query(`DROP INDEX IF EXISTS ${index}`);
    const { rows: parts } = await pool.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'jobs'::regclass`,
    );
    for (const { name } of parts) await pool.query(`ALTER TABLE ${name} SET (fillfactor = ${HOT_FILLFACTOR})`);
  }
  const owner = randomUUID();
  await pool.query("INSERT INTO api_keys (id, name, prefix, secret_hash, scopes) VALUES ($1, 'stmt', $2, 'x', '{jobs:write}')", [owner, owner.slice(0, 8)]);
  await pool.query(
    `INSERT INTO models (id, name, version, artifact_key, sha256, size_bytes, inputs, outputs, batchable, max_batch_size, max_batch_delay_ms)
     VALUES ($1, 'cnn', 1, 'k', 's', 1, '[]', '[]', true, 32, 5)`,
    [randomUUID()],
  );
  const input = { name: 'image', datatype: 'FP32' as const, shape: [1, inputBytes / 4], bytes: inputBytes, data: new Uint8Array(inputBytes).fill(7) };
  const output = { name: 'logits', datatype: 'FP32' as const, shape: [1, 10], bytes: 40, data: new Uint8Array(40).fill(1) };
  const insertGroup = async () => {
    const jobs = Array.from({ length: size }, () => newTestJob(owner, { modelName: 'cnn', inputs: [input] }));
    await measure('insert (submit, group of the batch size)', size, () => insertJobs(pool, jobs));
    return jobs;
  };
  if (backlog) await pool.query('ANALYZE jobs');
  const queued: Array<Awaited<ReturnType<typeof insertGroup>>> = [];
  const completed: string[] = [];
  if (backlog) for (let b = 0; b < batches; b++) queued.push(await insertGroup());
  for (let b = 0; b < batches; b++) {
    const jobs = backlog ? queued[b]! : await insertGroup();
    const ids = jobs.map((j) => j.id);
    const run: BatchRun = { batchId: randomUUID(), workerId: 'w-stmt', batchSize: size, ranMs: 2 };
    // The claim of jobs whose queue entries carry their inputs (QUEUE_CARRIED_INPUTS_MB): the fencing columns only.
    await measure('claim, inputs carried in the queue entries', size, () =>
      startJobs(pool, { ids, carried: new Set(ids), workerId: run.workerId, batchId: run.batchId, batchSize: size }),
    );
    const claim = await measure('claim (startJobs)', size, () => startJobs(pool, { ids, workerId: run.workerId, batchId: run.batchId, batchSize: size }));
    // Every other batch runs long enough to be marked: the mark's cost, and the completion of a marked batch beside an unmarked one.
    const marked = b % 2 === 1;
    if (marked)
      await measure('running mark (a batch past WORKER_RUNNING_MARK_MS)', size, () =>
        markJobsRunning(
          pool,
          run,
          ids.map((id) => ({ id, attempt: claim.get(id)!.attempt })),
        ),
      );
    const results = ids.map((id) => ({ id, attempt: claim.get(id)!.attempt, outputs: [output], inferMs: 1, items: 1, deviceMs: 1 / size }));
    const batch = {
      id: run.batchId,
      modelName: 'cnn',
      modelVersion: 1,
      workerId: run.workerId,
      device: 'cpu',
      provider: 'cpu',
      size,
      items: size,
      startedAt: new Date(),
      inferMs: 1,
    };
    const completion = marked ? 'completion with the batch record (marked batch)' : 'completion with the batch record (unmarked batch)';
    await measure(completion, size, () => completeJobs(pool, run, results, batch));
    completed.push(...ids);
  }
  if (purge) {
    // The purge reads the partitions' floors on a second connection inside its transaction: its CPU is not this backend's alone.
    const purgePool = createPool({ url: env.DATABASE_URL, schema, max: 2 });
    await admin.query('CHECKPOINT');
    for (let i = 0; i < completed.length; i += PURGE_GROUP) {
      const ids = completed.slice(i, i + PURGE_GROUP);
      await measure('purge (retention, after a checkpoint; CPU undercounted)', ids.length, () => purgeJobs(purgePool, ids, 'retention'));
    }
    await purgePool.end();
  }
  console.log(
    `${batches} batches of ${size} jobs, ${inputBytes}-byte inline inputs, 40-byte outputs; medians per job` +
      (hot ? `; step 5's jobs (work-list indexes dropped, fillfactor ${HOT_FILLFACTOR})` : ''),
  );
  console.log('| statement | µs a job (client wall time, median) | Postgres backend CPU µs a job (mean) | WAL bytes a job (median) |');
  console.log('| --- | --- | --- | --- |');
  for (const [name, s] of samples)
    console.log(`| ${name} | ${median(s.map((x) => x.us)).toFixed(1)} | ${cpuUsPerJob(s)} | ${Math.round(median(s.map((x) => x.wal)))} |`);
  // The statements' backend reports its table statistics at the end of its next transaction.
  await pool.query('SELECT pg_stat_force_next_flush()');
  const {
    rows: [updates],
  } = await admin.query<{ updated: string; hot: string }>(
    `SELECT coalesce(sum(n_tup_upd), 0) AS updated, coalesce(sum(n_tup_hot_upd), 0) AS hot FROM pg_stat_user_tables
      WHERE relid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = format('%I.jobs', $1::text)::regclass)`,
    [schema],
  );
  console.log(`row updates of jobs: ${updates!.updated}, of which HOT: ${updates!.hot}`);
  if (walMap)
    // With `purge`, its checkpoint may have recycled the segments of the statements before it: only the purge is read then.
    for (const [name, s] of purge ? [...samples].filter(([name]) => name.startsWith('purge')) : samples) {
      const jobs = s.reduce((n, x) => n + x.jobs, 0);
      const total = new Map<string, { records: number; bytes: number; fpiBytes: number }>();
      // A statement that wrote nothing (a claim is a read) has no span to read.
      for (const x of s.filter((x) => x.from !== x.to))
        for (const [what, w] of await walByRelation(admin, x.from, x.to)) {
          const t = total.get(what) ?? { records: 0, bytes: 0, fpiBytes: 0 };
          total.set(what, { records: t.records + w.records, bytes: t.bytes + w.bytes, fpiBytes: t.fpiBytes + w.fpiBytes });
        }
      console.log(`\n${name}: WAL a job by relation (records, bytes, of which full-page images)`);
      for (const [what, t] of [...total].sort((a, b) => b[1].bytes - a[1].bytes))
        console.log(`  ${what}: ${(t.records / jobs).toFixed(2)} records, ${Math.round(t.bytes / jobs)} B (${Math.round(t.fpiBytes / jobs)} B FPI)`);
    }
} finally {
  await pool.end();
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  await admin.end();
}
