import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { connect } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { createExecutableFinder, type FindExecutable } from './find-executable.ts';
import { findFreePort } from './free-port.ts';
import { REDIS_SERVER, resolveDebianBinary } from './debian-binary.ts';
import type { RunningService } from './running-service.ts';

export interface RedisServerOptions {
  /** Working directory of the server; nothing is persisted there. */
  dataDir: string;
  /** @default a free port */
  port?: number;
  /** The address to listen on (a network namespace's own, in the hosts-apart tests). @default 127.0.0.1 */
  bind?: string;
  /** @default search the standard system directories (/usr/bin, /usr/sbin, …) */
  findExecutable?: FindExecutable;
  /** Told when redis-server has to be installed first (slow). */
  log?: (line: string) => void;
  /** A config file to start from (a Sentinel's, which it rewrites): the first argument. */
  configFile?: string;
  /** More arguments after ours (`--cluster-enabled yes`, `--sentinel`, …). */
  args?: string[];
}

/** A redis-server of ours: stopped (SIGTERM, a clean shutdown) or killed (SIGKILL, as a crash or an OOM kill). */
export interface RunningRedis extends RunningService {
  /** SIGKILL: no shutdown, no goodbye to clients or replicas; resolves once the process is gone. */
  kill(): Promise<void>;
}

const READY_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;
const PORT_ATTEMPTS = 3;

export async function startRedisServer(options: RedisServerOptions): Promise<RunningRedis> {
  const findExecutable = options.findExecutable ?? createExecutableFinder();
  const binary = await resolveDebianBinary(REDIS_SERVER, { findExecutable, log: options.log });
  await mkdir(options.dataDir, { recursive: true });
  const setpriv = findExecutable('setpriv');
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await findFreePort());
    try {
      return await launchRedis({
        binary,
        setpriv,
        port,
        bind: options.bind ?? '127.0.0.1',
        dataDir: options.dataDir,
        configFile: options.configFile,
        extraArgs: options.args ?? [],
      });
    } catch (err) {
      // Another process took the probed port before redis bound it: probe again.
      if (options.port !== undefined || attempt >= PORT_ATTEMPTS || !isAddressInUse(err)) throw err;
    }
  }
}

interface LaunchOptions {
  binary: string;
  setpriv: string | undefined;
  port: number;
  bind: string;
  dataDir: string;
  configFile: string | undefined;
  extraArgs: string[];
}

async function launchRedis(o: LaunchOptions): Promise<RunningRedis> {
  // No persistence and noeviction: the queue must never silently lose a job
  // (BullMQ requires noeviction), and test data is worthless after the run.
  const args = [
    ...(o.configFile === undefined ? [] : [o.configFile]),
    '--port',
    String(o.port),
    '--bind',
    o.bind,
    // Without a password Redis answers only loopback clients, unless told the network is a private one.
    ...(o.bind === '127.0.0.1' ? [] : ['--protected-mode', 'no']),
    '--dir',
    o.dataDir,
    '--save',
    '',
    '--appendonly',
    'no',
    '--maxmemory-policy',
    'noeviction',
    '--daemonize',
    'no',
    ...o.extraArgs,
  ];
  // The 'exit' hook below misses SIGKILL and crashes; setpriv asks the kernel
  // to SIGTERM redis when our thread dies, so no orphan keeps the port.
  const child = o.setpriv
    ? spawn(o.setpriv, ['--pdeathsig', 'TERM', '--', o.binary, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(o.binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });

  // Always drain the pipes: a full pipe would block redis on its next log line.
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);

  const killOnExit = () => {
    child.kill('SIGTERM');
  };
  process.on('exit', killOnExit);
  let hasExited = false;
  const exited = new Promise<void>((resolve) => {
    const done = () => {
      hasExited = true;
      process.off('exit', killOnExit);
      resolve();
    };
    child.once('exit', done);
    child.once('error', (err) => {
      output += `\n${err.message}`;
      done();
    });
  });

  try {
    await waitForPong(
      o.bind,
      o.port,
      () => hasExited,
      () => output,
    );
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    throw err;
  }

  return {
    url: `redis://${o.bind}:${o.port}`,
    async stop() {
      if (hasExited) return;
      child.kill('SIGTERM');
      const forceKill = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(forceKill);
    },
    async kill() {
      if (hasExited) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

async function waitForPong(host: string, port: number, hasExited: () => boolean, output: () => string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (hasExited()) throw new Error(`redis-server exited before it was ready:\n${output()}`);
    if (await ping(host, port)) return;
    await delay(25);
  }
  throw new Error(`redis-server did not answer PING on ${host}:${port} within ${READY_TIMEOUT_MS} ms:\n${output()}`);
}

/** One inline PING over a raw socket: no client library for a readiness probe. */
function ping(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const finish = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => finish(data.toString().startsWith('+PONG')));
  });
}

function isAddressInUse(err: unknown): boolean {
  return err instanceof Error && /address already in use/i.test(err.message);
}
