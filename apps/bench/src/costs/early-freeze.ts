/**
 * Whether autovacuum freezing a day's TOAST pages soon after their inserts spares the page images a later freeze
 * writes. `node --import tsx apps/bench/src/costs/early-freeze.ts [seconds] [jobs a second] [checkpoint every s]`
 * (default 240, 200, 60), on the server DATABASE_URL names (a quiet one, with autovacuum on, as a superuser: CHECKPOINT)
 * or, without it, on the bench's embedded Postgres (`.inferq/bench-services`). Two schemas in turn: the partition
 * today's jobs land in with autovacuum's defaults on its TOAST table, then with JOB_PARTITION_TOAST_STORAGE. In each,
 * 12 KiB CNN jobs are inserted in groups every 100 ms with a CHECKPOINT every given seconds (closer together than
 * checkpoint_timeout's 5 minutes, as where WAL volume triggers them) while autovacuum runs as configured; then, after
 * a CHECKPOINT, the partition is frozen (`VACUUM (FREEZE)`: the aggressive vacuum a job kept past about 150 M
 * transactions meets). Prints, a job, the
 * WAL of the insert phase (the inserts and whatever autovacuum wrote meanwhile), of the later freeze, and their sum,
 * and how often autovacuum visited the TOAST table.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  createPool,
  ensureJobPartitions,
  insertJobs,
  JOB_PARTITION_TOAST_STORAGE,
  listJobPartitionBounds,
  runMigrations,
  tuneJobPartitions,
  type Pool,
} from '@inferq/db';
import { provideServices } from '@inferq/dev-stack';
import { newTestJob } from '@inferq/test-utils';
import { loadBenchEnv } from '../bench-env.ts';
import { walAfterCheckpoint, walDuring } from './later-wal.ts';

const [seconds = 240, rate = 200, checkpointEveryS = 60] = process.argv.slice(2, 5).map(Number);
const INPUT_BYTES = 12_288;
const TICK_MS = 100;
const ROOT = resolve(import.meta.dirname, '../../../..');
const env = loadBenchEnv();
const services = await provideServices({ env: { ...env }, dataDir: resolve(ROOT, '.inferq/bench-services'), log: console.log });
// provideServices names only what it started: a configured server is the environment's.
const url = env.DATABASE_URL ?? services.env.DATABASE_URL!;
const admin = createPool({ url, schema: 'public', max: 1 });
const { rows: settings } = await admin.query<{ name: string; setting: string }>(
  "SELECT name, setting FROM pg_settings WHERE name IN ('autovacuum', 'autovacuum_naptime', 'checkpoint_timeout', 'data_checksums', 'server_version')",
);
console.log(settings.map((r) => `${r.name} ${r.setting}`).join(', '));

async function run(variant: 'autovacuum defaults' | 'JOB_PARTITION_TOAST_STORAGE'): Promise<void> {
  const schema = `freeze_${randomUUID().slice(0, 8)}`;
  await admin.query(`CREATE SCHEMA ${schema}`);
  const pool: Pool = createPool({ url, schema, max: 2 });
  try {
    await runMigrations(pool);
    await ensureJobPartitions(pool, { aheadDays: 0 });
    // Today's ids land in jobs_legacy on a fresh schema (migration 0016 bounds it at the time it ran), else in today's day.
    const partitions = (await listJobPartitionBounds(pool)).map((p) => `${schema}.${p.name}`);
    const toastOptions = Object.keys(JOB_PARTITION_TOAST_STORAGE).map((k) => `toast.${k}`);
    if (variant === 'autovacuum defaults') for (const p of partitions) await pool.query(`ALTER TABLE ${p} RESET (${toastOptions.join(', ')})`);
    else await tuneJobPartitions(pool);
    const owner = randomUUID();
    await pool.query("INSERT INTO api_keys (id, name, prefix, secret_hash, scopes) VALUES ($1, 'freeze', $2, 'x', '{jobs:write}')", [owner, owner.slice(0, 8)]);
    const group = Math.max(1, Math.round((rate * TICK_MS) / 1000));
    const input = () => ({
      name: 'image',
      datatype: 'FP32' as const,
      shape: [1, INPUT_BYTES / 4],
      bytes: INPUT_BYTES,
      data: new Uint8Array(randomBytes(INPUT_BYTES)),
    });
    let jobs = 0;
    const started = performance.now();
    let nextCheckpoint = started + checkpointEveryS * 1000;
    const insertPhase = await walDuring(admin, async () => {
      while (performance.now() - started < seconds * 1000) {
        const tick = performance.now();
        await insertJobs(
          pool,
          Array.from({ length: group }, () => newTestJob(owner, { modelName: 'cnn', inputs: [input()] })),
        );
        jobs += group;
        if (performance.now() >= nextCheckpoint) {
          await admin.query('CHECKPOINT');
          nextCheckpoint += checkpointEveryS * 1000;
        }
        await sleep(Math.max(0, TICK_MS - (performance.now() - tick)));
      }
    });
    const inserted = insertPhase.bytes / jobs;
    const partition = (await pool.query<{ name: string }>('SELECT c.relname AS name FROM jobs j JOIN pg_class c ON c.oid = j.tableoid LIMIT 1')).rows[0]!.name;
    const freeze = (await walAfterCheckpoint(admin, () => pool.query(`VACUUM (FREEZE) ${partition}`))).bytes / jobs;
    const {
      rows: [toast],
    } = await admin.query<{ autovacuums: number }>(
      `SELECT s.autovacuum_count::int AS autovacuums FROM pg_class c JOIN pg_stat_all_tables s ON s.relid = c.reltoastrelid WHERE c.oid = $1::regclass`,
      [`${schema}.${partition}`],
    );
    console.log(
      `| ${variant} | ${jobs} | ${Math.round(inserted)} | ${Math.round(freeze)} | ${Math.round(inserted + freeze)} | ${toast?.autovacuums ?? 'n/a'} |`,
    );
  } finally {
    await pool.end();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  }
}

try {
  console.log(`${seconds} s of ${rate} jobs a second (12 KiB inline inputs), a CHECKPOINT every ${checkpointEveryS} s; WAL bytes a job`);
  console.log('| TOAST table | jobs | insert phase (with autovacuum) | later freeze | sum | autovacuums of the TOAST table |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  await run('autovacuum defaults');
  await run('JOB_PARTITION_TOAST_STORAGE');
} finally {
  await admin.end();
  await services.stop();
}
