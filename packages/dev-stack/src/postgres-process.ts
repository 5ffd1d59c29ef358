import { spawn, type ChildProcess } from 'node:child_process';
import { chown, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { binaryPath } from './postgres-binaries.ts';
import type { PostgresPlacement } from './postgres-placement.ts';

const READY_TIMEOUT_MS = 60_000;
/** A fast shutdown takes well under a second; a postgres that ignores it is killed. */
const STOP_TIMEOUT_MS = 15_000;

/** A failed initdb or postgres, with its output (the reason). */
export class PostgresProcessError extends Error {
  constructor(
    message: string,
    readonly output: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface Postmaster {
  /** Fast shutdown (SIGINT), then SIGKILL if it does not exit. Idempotent. */
  stop(): Promise<void>;
}

/** Messages in English whatever the environment's locale: readiness is read from the log. */
const ENV = { ...process.env, LC_MESSAGES: 'C' };

function spawnAs(placement: PostgresPlacement, name: 'initdb' | 'postgres', args: string[]): ChildProcess {
  // cwd: postgres's user may not be allowed into ours.
  return spawn(binaryPath(placement.binaries, name), args, {
    ...placement.runAs,
    cwd: dirname(placement.dataDir),
    env: ENV,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function collectOutput(child: ChildProcess): () => string {
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => output;
}

/** initdb into the (empty) data directory, with a superuser and password. */
export async function initialiseCluster(placement: PostgresPlacement, superuser: { user: string; password: string }): Promise<void> {
  // initdb reads the password from a file its user can read; the data directory must stay empty.
  const pwfile = join(dirname(placement.dataDir), `.${superuser.user}-pwfile-${process.pid}`);
  await writeFile(pwfile, `${superuser.password}\n`, { mode: 0o600 });
  try {
    if (placement.runAs) await chown(pwfile, placement.runAs.uid, placement.runAs.gid);
    const child = spawnAs(placement, 'initdb', [
      `--pgdata=${placement.dataDir}`,
      '--auth=scram-sha-256',
      `--username=${superuser.user}`,
      `--pwfile=${pwfile}`,
      '--encoding=UTF8',
      // Unicode-aware and independent of the machine's installed locales.
      '--locale-provider=builtin',
      '--builtin-locale=C.UTF-8',
      '--locale=C',
      '--lc-messages=C',
    ]);
    const output = collectOutput(child);
    await new Promise<void>((resolve, reject) => {
      child.once('error', (err) => reject(new PostgresProcessError(`could not run initdb: ${err.message}`, output(), { cause: err })));
      child.once('close', (code, signal) => {
        if (code === 0) resolve();
        else reject(new PostgresProcessError(`initdb failed (exit ${code ?? signal})`, output()));
      });
    });
  } finally {
    await rm(pwfile, { force: true });
  }
}

/** Starts postgres on `host`:`port` (no unix socket) and resolves once it accepts connections. */
export async function startPostmaster(placement: PostgresPlacement, port: number, host = '127.0.0.1'): Promise<Postmaster> {
  const child = spawnAs(placement, 'postgres', [
    '-D',
    placement.dataDir,
    '-p',
    String(port),
    '-c',
    `listen_addresses=${host}`,
    // A socket could collide with a system Postgres's socket directory.
    '-c',
    'unix_socket_directories=',
    '-c',
    'lc_messages=C',
    // Statement counts for the benchmarks' cost per job (apps/bench); the npm binaries ship the module.
    '-c',
    'shared_preload_libraries=pg_stat_statements',
  ]);
  const output = collectOutput(child);
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    const done = () => {
      exited = true;
      resolve();
    };
    child.once('close', done);
    // A child that never started (EACCES, ENOENT) has no pid and may never close.
    child.once('error', () => {
      if (child.pid === undefined) done();
    });
  });
  // Our 'exit' hook: nothing async runs there, but a signal is sent synchronously.
  const stopOnExit = () => child.kill('SIGINT');
  process.on('exit', stopOnExit);
  const stop = async () => {
    if (!exited) {
      child.kill('SIGINT');
      const kill = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exit;
      clearTimeout(kill);
    }
    process.off('exit', stopOnExit);
  };

  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new PostgresProcessError(`postgres did not accept connections within ${READY_TIMEOUT_MS} ms`, output())),
        READY_TIMEOUT_MS,
      );
      const settle = (fn: () => void) => {
        clearTimeout(timer);
        fn();
      };
      child.stderr?.on('data', () => {
        if (output().includes('database system is ready to accept connections')) settle(resolve);
      });
      child.once('error', (err) => settle(() => reject(new PostgresProcessError(`could not run postgres: ${err.message}`, output(), { cause: err }))));
      child.once('close', (code, signal) =>
        settle(() => reject(new PostgresProcessError(`postgres exited (${code ?? signal}) before it was ready`, output()))),
      );
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return { stop };
}
