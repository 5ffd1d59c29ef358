import { setTimeout as sleep } from 'node:timers/promises';
import { purgeJobs, type Pool } from '@inferq/db';
import { readPostgres } from './postgres-activity.ts';

/** The retention sweep's group (apps/api/src/background/retention-sweeper.ts). */
export const PURGE_GROUP = 500;
/** Freezes tried before giving up on one: a transaction older than the jobs (another client's) holds their rows back. */
const FREEZE_TRIES = 3;

/** What the jobs in `jobs` write to the WAL after their result, a job (bytes). */
export interface LaterWal {
  /** `VACUUM (FREEZE)` after a checkpoint: the aggressive vacuum a job kept past about 150 M transactions meets; null when it could not freeze them. */
  freeze: number | null;
  /** Every job purged to a tombstone after a checkpoint, as the retention sweep does at JOB_RETENTION_S. */
  purge: number;
}

/** Whether every partition's TOAST table was frozen past the newest row of `jobs` (its relfrozenxid newer than every row's xmin). */
async function jobsFrozen(pool: Pool): Promise<boolean> {
  const { rows } = await pool.query<{ frozen: boolean | null }>(
    `SELECT bool_and(age(t.relfrozenxid) < (SELECT min(age(xmin)) FROM jobs)) AS frozen
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class t ON t.oid = c.reltoastrelid
      WHERE i.inhparent = 'jobs'::regclass`,
  );
  return rows[0]?.frozen === true;
}

/** Runs `change`: the WAL written meanwhile (bytes, the whole server's), and what it returned. */
export async function walDuring<T>(pool: Pool, change: () => Promise<T>): Promise<{ bytes: number; result: T }> {
  const from = (await readPostgres(pool, false)).walBytes;
  const result = await change();
  return { bytes: Number((await readPostgres(pool, false)).walBytes - from), result };
}

/** Runs `change` right after a CHECKPOINT: the WAL it wrote (walDuring). */
export async function walAfterCheckpoint<T>(pool: Pool, change: () => Promise<T>): Promise<{ bytes: number; result: T }> {
  await pool.query('CHECKPOINT');
  return walDuring(pool, change);
}

/**
 * The rest of a job's WAL after its result, on a table of finished jobs that nothing else writes: each of these changes
 * comes long after the job's pages were last written, so a checkpoint always lies between, and the first change of a
 * page after one writes the page's full image (a TOASTed inline input is written again each time). Null when this
 * role may not CHECKPOINT (a superuser or pg_checkpoint, Postgres 15+).
 */
export async function laterWalPerJob(pool: Pool): Promise<LaterWal | null> {
  const { rows } = await pool.query<{ id: string }>('SELECT id::text AS id FROM jobs WHERE purged_at IS NULL');
  if (rows.length === 0) return null;
  const ids = rows.map((r) => r.id);
  try {
    const freeze = await walAfterCheckpoint(pool, async () => {
      for (let i = 0; i < FREEZE_TRIES; i++) {
        if (i > 0) await sleep(1_000);
        await pool.query('VACUUM (FREEZE) jobs');
        if (await jobsFrozen(pool)) return true;
      }
      return false;
    });
    const purge = await walAfterCheckpoint(pool, async () => {
      for (let i = 0; i < ids.length; i += PURGE_GROUP) await purgeJobs(pool, ids.slice(i, i + PURGE_GROUP), 'retention');
    });
    return { freeze: freeze.result ? freeze.bytes / ids.length : null, purge: purge.bytes / ids.length };
  } catch (err) {
    if ((err as { code?: string }).code === '42501') return null;
    throw err;
  }
}
