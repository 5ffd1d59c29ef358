import { execFileSync } from 'node:child_process';
import { cpus, totalmem, release } from 'node:os';
import { createRequire } from 'node:module';
import type { Pool } from '@inferq/db';

export interface Machine {
  cpu: string;
  cores: number;
  memoryGiB: number;
  os: string;
  node: string;
  onnxruntime: string;
  redis: string;
  postgres: string;
  /** The database as the run found it: a fresh one, or one long used (its catalog bloated by the schemas tests made and dropped). */
  database: DatabaseState;
}

interface DatabaseState {
  /** Rows of pg_class (relations of every schema) when the run began. */
  relations: number;
  /** pg_class, pg_attribute, pg_depend and pg_index on disk, dead rows included, in MiB. */
  catalogMiB: number;
  state: 'fresh' | 'long-used';
}

/** A catalog past this size has held far more than one install's relations: plans and statements on it cost more. */
const LONG_USED_CATALOG_MIB = 16;

async function describeDatabase(pool: Pool): Promise<DatabaseState> {
  const { rows } = await pool.query<{ relations: string; bytes: string }>(
    `SELECT (SELECT count(*) FROM pg_class) AS relations,
            pg_total_relation_size('pg_catalog.pg_class') + pg_total_relation_size('pg_catalog.pg_attribute')
            + pg_total_relation_size('pg_catalog.pg_depend') + pg_total_relation_size('pg_catalog.pg_index') AS bytes`,
  );
  const catalogMiB = Math.round(Number(rows[0]!.bytes) / 2 ** 20);
  return { relations: Number(rows[0]!.relations), catalogMiB, state: catalogMiB > LONG_USED_CATALOG_MIB ? 'long-used' : 'fresh' };
}

const tryRun = (command: string, args: string[]): string | undefined => {
  try {
    return execFileSync(command, args, { encoding: 'utf8', timeout: 5_000 }).trim();
  } catch {
    return undefined;
  }
};

/** What the numbers were measured on: they mean nothing without it. Read before the scenarios, which add relations of their own. */
export async function describeMachine(deps: { pool: Pool; redisInfo: () => Promise<string> }): Promise<Machine> {
  const require = createRequire(import.meta.url);
  const info = await deps.redisInfo();
  const { rows } = await deps.pool.query('SHOW server_version');
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os: tryRun('sh', ['-c', '. /etc/os-release && echo "$PRETTY_NAME"']) ?? `Linux ${release()}`,
    node: process.version,
    onnxruntime: (require('onnxruntime-node/package.json') as { version: string }).version,
    redis: /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown',
    postgres: String(rows[0]?.server_version ?? 'unknown'),
    database: await describeDatabase(deps.pool),
  };
}
