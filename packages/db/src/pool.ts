import pg from 'pg';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

// BIGINT (size_bytes) fits a JS number for any realistic artifact.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export function createPool(options: { url: string; schema: string; max: number; applicationName?: string }): Pool {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max,
    application_name: options.applicationName ?? 'inferq',
    options: `-c search_path=${options.schema}`,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    // Renewed hourly, busy or not: a connection keeps every statement it prepared, and by-id statements are prepared per day (jobs.ts).
    maxLifetimeSeconds: 3_600,
  });
  // An idle client losing its connection must not crash the process; the next query reports it.
  pool.on('error', () => {});
  return pool;
}

export async function withTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/** True for errors that mean the database cannot be reached (answer 503, not 500). */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | undefined;
  if (!e) return false;
  if (
    typeof e.code === 'string' &&
    (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03', '53300'].includes(e.code) || e.code.startsWith('08'))
  )
    return true;
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(e.message ?? '');
}
