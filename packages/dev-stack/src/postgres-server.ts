import { existsSync } from 'node:fs';
import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createPool } from '@inferq/db';
import { findFreePort } from './free-port.ts';
import { findPostgresBinaries, type PostgresBinaries } from './postgres-binaries.ts';
import { DEFAULT_RELOCATION_BASE, placePostgres, type PostgresPlacement } from './postgres-placement.ts';
import { initialiseCluster, PostgresProcessError, startPostmaster } from './postgres-process.ts';
import type { RunningService } from './running-service.ts';
import { ServiceStartError } from './service-start-error.ts';
import { stopOrphanedPostmaster } from './stale-postmaster.ts';

export interface PostgresServerOptions {
  /** The cluster's data directory: initialised on first use, reused after. As root it may be relocated (see placePostgres). */
  dataDir: string;
  /** @default a free port */
  port?: number;
  /** The address to listen on; clients on its subnet may connect too (pg_hba `samenet`). @default 127.0.0.1 */
  listenAddress?: string;
  /** @default the binaries npm installed for this platform */
  binaries?: PostgresBinaries;
  /** As root, where binaries and clusters go when the `postgres` user cannot reach them. @default /var/lib/inferq */
  relocationBase?: string;
  /** Told where things were relocated. */
  log?: (line: string) => void;
}

export interface RunningPostgres extends RunningService {
  /** Where the cluster lives (differs from the requested one when relocated). */
  dataDir: string;
  /** Where the binaries run from. */
  binDir: string;
}

// Fixed, so a cluster initialised by an earlier run still accepts us. The
// server listens on 127.0.0.1 (or a test's private network); this is a development credential.
const USER = 'inferq';
const PASSWORD = 'inferq';
const DATABASE = 'inferq';
const PORT_ATTEMPTS = 3;
const FALLBACK_FIX = 'or set DATABASE_URL to an existing server';

/** Every failure is a ServiceStartError naming the cause and the fix. */
export async function startPostgresServer(options: PostgresServerOptions): Promise<RunningPostgres> {
  const binaries =
    options.binaries ??
    (await findPostgresBinaries().catch((err: unknown) => {
      throw new ServiceStartError('Postgres', (err as Error).message, `run \`npm ci\`, ${FALLBACK_FIX}`, { cause: err });
    }));
  const placement = await placePostgres({
    binaries,
    dataDir: options.dataDir,
    relocationBase: options.relocationBase ?? DEFAULT_RELOCATION_BASE,
    log: options.log,
  }).catch((err: unknown) => {
    if (err instanceof ServiceStartError) throw err;
    throw new ServiceStartError('Postgres', `could not prepare ${options.dataDir}: ${(err as Error).message}`, FALLBACK_FIX, { cause: err });
  });
  const { dataDir } = placement;

  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    await initialiseCluster(placement, { user: USER, password: PASSWORD }).catch((err: unknown) => {
      throw failure(err, placement, `empty ${dataDir} (\`rm -rf '${dataDir}'\`) and run again, ${FALLBACK_FIX}`);
    });
  }
  await stopOrphanedPostmaster(dataDir);
  const host = options.listenAddress ?? '127.0.0.1';
  if (host !== '127.0.0.1') await allowSameNet(dataDir);

  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await findFreePort());
    let postmaster;
    try {
      postmaster = await startPostmaster(placement, port, host);
    } catch (err) {
      const inUse = err instanceof PostgresProcessError && /address already in use/i.test(err.output);
      if (options.port === undefined && attempt < PORT_ATTEMPTS && inUse) continue;
      throw failure(
        err,
        placement,
        `if another postgres serves ${dataDir}, stop it; if the cluster is damaged, remove it (\`rm -rf ` +
          `'${dataDir}'\`, its data is lost) and run again; ${FALLBACK_FIX}`,
      );
    }
    const url = `postgres://${USER}:${PASSWORD}@${host}:${port}`;
    try {
      await createDatabaseIfMissing(url);
    } catch (err) {
      await postmaster.stop();
      throw new ServiceStartError('Postgres', `could not create the ${DATABASE} database: ${(err as Error).message}`, FALLBACK_FIX, { cause: err });
    }
    return { url: `${url}/${DATABASE}`, dataDir, binDir: placement.binaries.dir, stop: postmaster.stop };
  }
}

/** initdb's pg_hba.conf admits loopback only; a server on another address admits its own subnet too. */
async function allowSameNet(dataDir: string): Promise<void> {
  const hba = join(dataDir, 'pg_hba.conf');
  const line = 'host all all samenet scram-sha-256';
  if (!(await readFile(hba, 'utf8')).includes(line)) await appendFile(hba, `${line}\n`);
}

async function createDatabaseIfMissing(serverUrl: string): Promise<void> {
  const pool = createPool({ url: `${serverUrl}/postgres`, schema: 'public', max: 1 });
  try {
    const found = await pool.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (found.rowCount === 0) await pool.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await pool.end();
  }
}

function failure(err: unknown, placement: PostgresPlacement, fix: string): ServiceStartError {
  const code = ((err as Error).cause as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EACCES' || code === 'ENOENT') fix = `reinstall the binaries in ${placement.binaries.dir} (\`npm ci\`), ${FALLBACK_FIX}`;
  const output = err instanceof PostgresProcessError ? err.output.trim() : '';
  const asUser = placement.runAs ? ` (as the system user "postgres", since Postgres refuses to run as root)` : '';
  const reason = `${(err as Error).message}${asUser}${output ? `:\n${output}` : ''}`;
  return new ServiceStartError('Postgres', reason, fix, { cause: err });
}
