import pg from 'pg';
import { parsePostgresUrl, type PostgresHost } from './postgres-url.ts';
import { createHostLocator, locatedClientClass } from './writable-host.ts';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

// BIGINT (size_bytes) fits a JS number for any realistic artifact.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export interface PoolOptions {
  /** A libpq URL: one host, or several with `target_session_attrs=read-write` (postgres-url.ts). */
  url: string;
  schema: string;
  max: number;
  applicationName?: string;
  /**
   * How long a statement may wait for its answer before the connection is given up (0: no limit). It bounds what a
   * vanished primary costs a caller: a host that stops answering without a reset would otherwise hold every query
   * until the kernel's TCP timeouts (minutes). Set above the longest statement the process runs.
   */
  queryTimeoutMs?: number;
  /** Told when a multi-host pool's writable host changes (a failover). */
  onHostChange?(host: PostgresHost, previous: PostgresHost | undefined): void;
}

/** Per host, connecting and the first answer: a host that does not answer must not hold up the next one. */
const CONNECT_TIMEOUT_MS = 5_000;
/**
 * A multi-host pool's look for the writable host: every host is asked at once, and one that has not answered in this
 * long does not qualify. It bounds how long connections wait after a promotion while a vanished host is still asked.
 */
const PROBE_TIMEOUT_MS = 2_000;

export function createPool(options: PoolOptions): Pool {
  const targets = parsePostgresUrl(options.url);
  const needsWrites = targets.targetSessionAttrs !== 'any';
  const config: pg.PoolConfig = {
    connectionString: targets.hosts[0]!.url,
    max: options.max,
    application_name: options.applicationName ?? 'inferq',
    options: `-c search_path=${options.schema}`,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    // Renewed hourly, busy or not: a connection keeps every statement it prepared, and by-id statements are prepared per day (jobs.ts).
    maxLifetimeSeconds: 3_600,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    ...(options.queryTimeoutMs ? { query_timeout: options.queryTimeoutMs } : {}),
  };
  const located =
    targets.hosts.length > 1 || needsWrites
      ? locatedClientClass(
          createHostLocator({ targets, clientConfig: config, probeTimeoutMs: PROBE_TIMEOUT_MS, onTargetChange: options.onHostChange }),
          needsWrites,
        )
      : undefined;
  if (located) config.Client = located as unknown as pg.PoolConfig['Client'];
  const pool = new pg.Pool(config);
  if (located) pool.on('release', (err: Error | undefined, client: pg.PoolClient) => err && located.failed(client, err));
  // An idle client losing its connection must not crash the process; the next query reports it.
  pool.on('error', () => {});
  return pool;
}

/** The config an app's pools are made from (core's dbConfig). */
export interface DatabaseConfig {
  DATABASE_URL: string;
  DATABASE_SCHEMA: string;
  DATABASE_POOL_MAX: number;
  DATABASE_QUERY_TIMEOUT_MS: number;
}

/** An app's pool from its config; a multi-host pool's move to another writable host is logged once (a failover). */
export function createPoolFromConfig(config: DatabaseConfig, applicationName: string, logger: { warn(fields: object, message: string): void }): Pool {
  return createPool({
    url: config.DATABASE_URL,
    schema: config.DATABASE_SCHEMA,
    max: config.DATABASE_POOL_MAX,
    applicationName,
    queryTimeoutMs: config.DATABASE_QUERY_TIMEOUT_MS,
    onHostChange: (host, previous) => {
      if (previous)
        logger.warn({ host: `${host.host}:${host.port}`, previous: `${previous.host}:${previous.port}` }, 'postgres: writes go to another host now');
    },
  });
}

export async function withTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // A connection lost mid-transaction (a failover) fails the statement in flight; without a listener the client's
  // 'error' event would also crash the process.
  const onError = () => {};
  client.on('error', onError);
  // A ROLLBACK that fails too (the connection lost, or its statement timed out) leaves a client no one may use again.
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch((e: unknown) => (broken = e instanceof Error ? e : new Error(String(e))));
    throw err;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}

/** True for errors that mean the database cannot be reached (answer 503, not 500). */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | undefined;
  if (!e) return false;
  if (
    typeof e.code === 'string' &&
    (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', '57P01', '57P02', '57P03', '53300', '25006'].includes(e.code) ||
      e.code.startsWith('08'))
  )
    return true;
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout|no Postgres host/i.test(
    e.message ?? '',
  );
}
