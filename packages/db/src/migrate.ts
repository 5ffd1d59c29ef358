import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Pool } from './connection/pool.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../prisma/migrations/', import.meta.url));

// Same table prisma migrate deploy keeps, so either tool sees the same history.
const HISTORY_DDL = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

const LOCK_ID = 72_707_301;

/**
 * Applies pending SQL migrations in name order, each in its own transaction, under an advisory lock;
 * with `upTo`, only those up to that one (its folder name) included: an upgrade done in two steps.
 */
export async function runMigrations(pool: Pool, dir: string = MIGRATIONS_DIR, options: { upTo?: string } = {}): Promise<string[]> {
  const all = (await readdir(dir, { withFileTypes: true }))
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  const { upTo } = options;
  if (upTo !== undefined && !all.includes(upTo)) throw new Error(`there is no migration ${upTo} in ${dir}`);
  const names = upTo === undefined ? all : all.filter((name) => name <= upTo);
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_ID]);
    await client.query(HISTORY_DDL);
    const done = new Map<string, string>(
      (
        await client.query<{ migration_name: string; checksum: string }>(
          'SELECT migration_name, checksum FROM _prisma_migrations WHERE rolled_back_at IS NULL AND finished_at IS NOT NULL',
        )
      ).rows.map((r) => [r.migration_name, r.checksum]),
    );
    for (const name of names) {
      const sql = await readFile(`${dir}/${name}/migration.sql`, 'utf8');
      const checksum = createHash('sha256').update(sql).digest('hex');
      const previous = done.get(name);
      if (previous !== undefined) {
        if (previous !== checksum) throw new Error(`migration ${name} was changed after it was applied; migrations are append-only`);
        continue;
      }
      await client.query('BEGIN');
      try {
        await client.query(sql);
        await client.query('INSERT INTO _prisma_migrations (id, checksum, migration_name, finished_at, applied_steps_count) VALUES ($1, $2, $3, now(), 1)', [
          randomUUID(),
          checksum,
          name,
        ]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${name} failed: ${(err as Error).message}`, { cause: err });
      }
      applied.push(name);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK_ID]).catch(() => {});
    client.release();
  }
  return applied;
}
