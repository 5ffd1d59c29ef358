import type { Pool } from '@inferq/db';
import { parentPid, processName } from './process-cpu.ts';

export interface PostgresReading {
  /** Statements run in this database so far (pg_stat_statements), or null when the server does not load it. */
  statements: number | null;
  /** Transactions committed and rolled back in this database (pg_stat_database; backends report them within 1 to 10 s). */
  transactions: number;
  /** Bytes of WAL written so far by the whole cluster (pg_current_wal_lsn). */
  walBytes: bigint;
  /** The postmaster's pid when the server runs on this machine and /proc shows it, else null. */
  postmasterPid: number | null;
}

/** A WAL location (`16/B374D848`) as a byte offset. */
export function parseLsn(lsn: string): bigint {
  const [high, low] = lsn.split('/') as [string, string];
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

/** Whether the server loads pg_stat_statements; if so the extension is created (in public) so its view can be read. */
async function hasStatementStats(pool: Pool): Promise<boolean> {
  const { rows } = await pool.query("SELECT current_setting('shared_preload_libraries') AS preload");
  if (!/\bpg_stat_statements\b/.test(String(rows[0].preload))) return false;
  await pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements SCHEMA public');
  return true;
}

/** One reading of what the database has done; the reading's own statements (two or three) count in it. */
export async function readPostgres(pool: Pool, withStatements?: boolean): Promise<PostgresReading & { withStatements: boolean }> {
  const statementsOn = withStatements ?? (await hasStatementStats(pool));
  const { rows } = await pool.query(
    `SELECT pg_current_wal_lsn()::text AS lsn, pg_backend_pid() AS pid,
       (SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database())::float8 AS xacts` +
      (statementsOn
        ? `, (SELECT sum(calls) FROM public.pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()))::float8 AS calls`
        : ''),
  );
  const r = rows[0];
  // The backend serving us is the postmaster's child; both are `postgres` in /proc only when the server is on this machine.
  const backend = Number(r.pid);
  const postmaster = processName(backend) === 'postgres' ? parentPid(backend) : null;
  return {
    statements: statementsOn ? Number(r.calls ?? 0) : null,
    transactions: Number(r.xacts),
    walBytes: parseLsn(String(r.lsn)),
    postmasterPid: postmaster !== null && processName(postmaster) === 'postgres' ? postmaster : null,
    withStatements: statementsOn,
  };
}
