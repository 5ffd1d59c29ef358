import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants, rmSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from '@inferq/dev-stack';
import { ETCD, etcdArgs, HAPROXY, haproxyConfig, PATRONI, patroniConfig, POSTGRES_BIN, PSQL, type NodeConfig } from './config.ts';
import {
  alive,
  childEnv,
  commandLineOf,
  killGroup,
  killPid,
  launch,
  postmasterOf,
  processes,
  removeOrphanedSegment,
  sharedMemoryOf,
  signalPostmaster,
  tail,
  type Launched,
  type UserIds,
} from './processes.ts';

// A real highly available Postgres for tests: Patroni 3 nodes (Debian's patroni, Postgres 15) with one etcd as their
// store and HAProxy in front, routing to the node Patroni calls primary. Everything listens on 127.0.0.1 ports of its
// own; data and logs live in one temporary directory, which close() deletes.

export interface PostgresHaOptions {
  /** @default 3 */
  nodes?: number;
  /** Patroni's synchronous_mode (synchronous_mode_strict off: a primary left alone keeps taking writes). @default true */
  synchronous?: boolean;
  /** Leader key TTL, seconds. @default Patroni's own, 30 */
  ttl?: number;
  /** Seconds between Patroni's loops. @default Patroni's own, 10 */
  loopWait?: number;
  /** Seconds Patroni retries the DCS and Postgres before demoting. @default Patroni's own, 10 */
  retryTimeout?: number;
  /** Bound on startup (every node up, replicas streaming). @default 90 000 */
  startTimeoutMs?: number;
}

export interface PostgresHaNode {
  name: string;
  pgPort: number;
  restPort: number;
}

export interface PostgresHa {
  /** postgres://postgres@127.0.0.1:<haproxyPort>/postgres — HAProxy routing to the node Patroni's REST API calls primary. */
  readonly endpointUrl: string;
  /** postgres://postgres@127.0.0.1:p1,127.0.0.1:p2,…/postgres?target_session_attrs=read-write (libpq; node-postgres cannot). */
  readonly multiHostUrl: string;
  readonly nodes: PostgresHaNode[];
  /** Where data and logs are (`<name>/patroni.log`, `etcd.log`, `haproxy.log`); deleted by close(). */
  readonly dir: string;
  /** The node Patroni's /cluster calls leader. */
  primary(): Promise<string>;
  /** SIGKILLs the primary's Patroni and its Postgres (the postmaster and every child at once): a dead host; returns its name. */
  killPrimary(): Promise<string>;
  /**
   * SIGSTOPs the primary's Patroni, postmaster and every backend: a host that vanished without a reset (a dead machine,
   * a cut network), whose connections hang rather than fail. Returns its name; `killNode` ends it for a `restartNode`.
   */
  freezePrimary(): Promise<string>;
  /** SIGKILLs a node's Patroni and Postgres (frozen or not). */
  killNode(name: string): Promise<void>;
  /** Planned switchover through Patroni's REST API (leader and candidate), then waits until the candidate takes writes through the endpoint. */
  switchover(): Promise<{ from: string; to: string; ms: number }>;
  /** Waits until a node other than `old` is primary and commits a write through the endpoint; returns its name (time it yourself). @default 60 000 ms */
  waitForNewPrimary(old: string, timeoutMs?: number): Promise<string>;
  /**
   * Starts a killed node's Patroni again; resolves once it streams from the primary as a replica (pg_rewind when needed)
   * and the group is as startPostgresHa left it (every live replica streaming, with sync a synchronous standby named).
   */
  restartNode(name: string, timeoutMs?: number): Promise<void>;
  /** SIGSTOPs the primary's walsenders; the returned function SIGCONTs them. */
  pauseReplication(): Promise<() => Promise<void>>;
  /** Kills everything (process groups) and deletes the directory; safe to call twice. */
  close(): Promise<void>;
}

interface ClusterMember {
  name: string;
  role: 'leader' | 'sync_standby' | 'replica' | 'standby_leader';
  state: string;
  port?: number;
  timeline?: number;
}

interface NodeState extends NodeConfig {
  configFile: string;
  logFile: string;
  patroni: Launched | undefined;
}

const BINARIES = [PATRONI, ETCD, HAPROXY, `${POSTGRES_BIN}/postgres`, `${POSTGRES_BIN}/initdb`, `${POSTGRES_BIN}/pg_rewind`, PSQL];

/** Whether Debian's patroni, etcd-server, haproxy and postgresql-15 are installed, and we are root (Postgres runs as `postgres`). */
export function postgresHaAvailable(): boolean {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return false;
  try {
    for (const binary of BINARIES) accessSync(binary, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

const PORT_ATTEMPTS = 2;

export async function startPostgresHa(options: PostgresHaOptions = {}): Promise<PostgresHa> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (err) {
      // A port found free may be taken before its server binds it: start over on other ports.
      if (attempt >= PORT_ATTEMPTS || !/address already in use/i.test((err as Error).message)) throw err;
    }
  }
}

async function postgresUser(): Promise<UserIds> {
  const id = (flag: string) =>
    new Promise<number>((resolve, reject) =>
      execFile('id', [flag, 'postgres'], (err, stdout) => (err ? reject(new Error(`no postgres system user: ${err.message}`)) : resolve(Number(stdout)))),
    );
  return { uid: await id('-u'), gid: await id('-g') };
}

async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await findFreePort());
  return [...ports];
}

async function startOnce(options: PostgresHaOptions): Promise<PostgresHa> {
  if (!postgresHaAvailable()) throw new Error(`Postgres HA needs root and ${BINARIES.join(', ')} (Debian: patroni etcd-server haproxy postgresql-15)`);
  const count = options.nodes ?? 3;
  if (count < 1) throw new Error('a Postgres HA group needs at least one node');
  const synchronous = options.synchronous ?? true;
  const startTimeoutMs = options.startTimeoutMs ?? 90_000;
  const runAs = await postgresUser();

  const [etcdPort, etcdPeerPort, haproxyPort, ...nodePorts] = (await distinctFreePorts(3 + 2 * count)) as [number, number, number, ...number[]];
  // The postgres user must reach its data directories below here.
  const root = await mkdtemp(join(tmpdir(), 'inferq-pg-ha-'));
  try {
    await chmod(root, 0o755);
    await chown(root, runAs.uid, runAs.gid);
  } catch (err) {
    await rm(root, { recursive: true, force: true });
    throw err;
  }
  const nodes: NodeState[] = Array.from({ length: count }, (_, i) => {
    const name = `pg${i + 1}`;
    const dir = join(root, name);
    return {
      name,
      pgPort: nodePorts[2 * i]!,
      restPort: nodePorts[2 * i + 1]!,
      dir,
      dataDir: join(dir, 'data'),
      configFile: join(dir, 'patroni.yml'),
      logFile: join(dir, 'patroni.log'),
      patroni: undefined,
    };
  });
  const byName = (name: string) => {
    const node = nodes.find((n) => n.name === name);
    if (!node) throw new Error(`no node ${name} (nodes: ${nodes.map((n) => n.name).join(', ')})`);
    return node;
  };
  const byPgPort = (port: number) => nodes.find((n) => n.pgPort === port)?.name;

  let etcd: Launched | undefined;
  let haproxy: Launched | undefined;
  /** Postmasters seen, so close() can reach one whose postmaster.pid is gone. */
  const postmasters = new Set<number>();
  let closed = false;

  const launchPatroni = (node: NodeState) => {
    node.patroni = launch(PATRONI, [node.configFile], { logFile: node.logFile, cwd: node.dir, runAs, env: childEnv({ HOME: node.dir }) });
  };
  const notePostmaster = (node: NodeState) => {
    const pm = postmasterOf(node.dataDir);
    if (pm) postmasters.add(pm.pid);
    return pm;
  };

  /** The synchronous part of close(), also run if the test process exits without it. */
  const killAll = (signalPostgres: NodeJS.Signals) => {
    for (const node of nodes) node.patroni?.signal('SIGKILL');
    for (const node of nodes) notePostmaster(node);
    for (const pid of postmasters) {
      // A postmaster killed earlier may have had its pid reused: only ours (its command line names our directory).
      if (!commandLineOf(pid)?.includes(root)) {
        postmasters.delete(pid);
        continue;
      }
      if (signalPostgres === 'SIGQUIT') signalPostmaster(pid, 'SIGCONT'); // paused walsenders must see the SIGQUIT
      signalPostmaster(pid, signalPostgres);
    }
    haproxy?.signal('SIGKILL');
    etcd?.signal('SIGKILL');
  };
  /** Whatever else runs from our directory: a pg_basebackup, pg_rewind or single-user postgres mid-start, a postmaster not yet in its pid file. */
  const sweep = () => {
    for (const p of processes()) {
      if (!p.cmdline.includes(root)) continue;
      if (p.cmdline.startsWith(`${POSTGRES_BIN}/postgres `)) signalPostmaster(p.pid, 'SIGKILL');
      killGroup(p.pgid, 'SIGKILL');
    }
  };
  const onExit = () => {
    killAll('SIGKILL');
    sweep();
    rmSync(root, { recursive: true, force: true, maxRetries: 3 });
  };
  process.on('exit', onExit);

  async function killNode(name: string): Promise<void> {
    const node = byName(name);
    const pm = notePostmaster(node);
    // Patroni first, so it cannot react to its Postgres dying; then the postmaster and its children at once.
    node.patroni?.signal('SIGKILL');
    if (pm) signalPostmaster(pm.pid, 'SIGKILL');
    await poll(async () => ((!node.patroni || node.patroni.exited()) && (!pm || !alive(pm.pid)) ? true : undefined), {
      timeoutMs: 10_000,
      what: `${name}'s Patroni and Postgres to die`,
    });
  }

  const close = async () => {
    if (closed) return;
    closed = true;
    process.off('exit', onExit);
    // Patroni first, so none starts its Postgres again; then an immediate shutdown (SIGQUIT to the postmaster and its
    // children), which removes its shared memory; SIGKILL after 5 s.
    killAll('SIGQUIT');
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline && [...postmasters].some(alive)) await new Promise((r) => setTimeout(r, 100));
    killAll('SIGKILL');
    sweep();
    await Promise.all([etcd, haproxy, ...nodes.map((n) => n.patroni)].map((l) => l && Promise.race([l.exit, new Promise((r) => setTimeout(r, 5_000))])));
    const gone = Date.now() + 5_000;
    while (Date.now() < gone && processes().some((p) => p.cmdline.includes(root))) await new Promise((r) => setTimeout(r, 100));
    // A SIGKILLed postmaster (killPrimary) leaves its SysV segment; its postmaster.pid names it.
    for (const node of nodes) {
      const segment = sharedMemoryOf(node.dataDir);
      if (segment !== undefined) await removeOrphanedSegment(segment);
    }
    await rm(root, { recursive: true, force: true, maxRetries: 5 });
  };

  const logs = (which: Array<{ label: string; file: string }> = []) =>
    which.map(({ label, file }) => `--- ${label} (${file}), last lines:\n${tail(file)}`).join('\n');
  const allLogs = () =>
    logs([
      ...nodes.map((n) => ({ label: `patroni ${n.name}`, file: n.logFile })),
      { label: 'etcd', file: join(root, 'etcd.log') },
      { label: 'haproxy', file: join(root, 'haproxy.log') },
    ]);

  /** Polls `check` until it returns a value; fails at once when `fatal` names a dead process, and with the logs at the deadline. */
  const poll = async <T>(
    check: () => Promise<T | undefined>,
    o: { timeoutMs: number; what: string; fatal?: () => string | undefined; logs?: () => string },
  ) => {
    const deadline = Date.now() + o.timeoutMs;
    let last: unknown;
    for (;;) {
      const dead = o.fatal?.();
      if (dead) throw new Error(`${o.what}: ${dead}\n${(o.logs ?? allLogs)()}`);
      try {
        const v = await check();
        if (v !== undefined) return v;
      } catch (err) {
        last = err;
      }
      if (Date.now() > deadline) {
        const why = last ? ` (last error: ${(last as Error).message})` : '';
        throw new Error(`timed out after ${o.timeoutMs} ms waiting for ${o.what}${why}\n${(o.logs ?? allLogs)()}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  const rest = async <T>(node: PostgresHaNode, path: string, init: { method?: string; body?: unknown; timeoutMs?: number } = {}) => {
    const res = await fetch(`http://127.0.0.1:${node.restPort}${path}`, {
      method: init.method ?? 'GET',
      headers: init.body === undefined ? {} : { 'content-type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: AbortSignal.timeout(init.timeoutMs ?? 2_000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${path} on ${node.name}: ${res.status} ${text}`);
    return (text.startsWith('{') ? JSON.parse(text) : text) as T;
  };
  const live = () => nodes.filter((n) => n.patroni && !n.patroni.exited());
  /** Patroni's view of the group, from the first live node that answers. */
  const members = async (): Promise<ClusterMember[]> => {
    let last: unknown = new Error('no live Patroni');
    for (const node of live()) {
      try {
        return (await rest<{ members: ClusterMember[] }>(node, '/cluster')).members;
      } catch (err) {
        last = err;
      }
    }
    throw last;
  };
  const leaderOf = (ms: ClusterMember[]) => ms.find((m) => m.role === 'leader' && m.state === 'running')?.name;

  const endpointUrl = `postgres://postgres@127.0.0.1:${haproxyPort}/postgres`;
  /** A write through the endpoint (txid_current() commits an xid, so a synchronous primary waits for its standby); returns the node that took it. */
  const writeThroughEndpoint = () =>
    new Promise<string>((resolve, reject) =>
      execFile(
        PSQL,
        ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-d', endpointUrl, '-c', 'SELECT inet_server_port(), txid_current()'],
        { timeout: 5_000, killSignal: 'SIGKILL', env: childEnv({ PGCONNECT_TIMEOUT: '3' }) },
        (err, stdout, stderr) => {
          if (err) return reject(new Error(`write through ${endpointUrl}: ${stderr.trim() || err.message}`));
          const name = byPgPort(Number(stdout.trim().split('|')[0]));
          if (!name) return reject(new Error(`write through the endpoint answered by an unknown server: ${stdout.trim()}`));
          resolve(name);
        },
      ),
    );

  /** Every live node but the primary streams from it (with sync, one of them synchronously), as Patroni's and Postgres's views agree. */
  const settled = async (): Promise<string | undefined> => {
    const ms = await members();
    const leader = leaderOf(ms);
    if (!leader) return undefined;
    const replicas = live().filter((n) => n.name !== leader);
    // A killed node's member key outlives it by up to a TTL: only the live nodes count.
    if (!live().every((n) => ms.some((m) => m.name === n.name && m.state === 'running'))) return undefined;
    const status = await rest<{ replication?: Array<{ application_name: string; state: string; sync_state: string }> }>(byName(leader), '/patroni');
    const streaming = (status.replication ?? []).filter((r) => r.state === 'streaming');
    if (!replicas.every((n) => streaming.some((r) => r.application_name === n.name))) return undefined;
    if (synchronous && replicas.length > 0) {
      const sync = streaming.find((r) => r.sync_state === 'sync')?.application_name;
      if (!sync || !ms.some((m) => m.name === sync && m.role === 'sync_standby')) return undefined;
    }
    return (await writeThroughEndpoint()) === leader ? leader : undefined;
  };
  const deadProcess = () => {
    if (etcd?.exited()) return `etcd exited`;
    if (haproxy?.exited()) return `haproxy exited`;
    const dead = nodes.find((n) => n.patroni?.exited());
    return dead && `patroni ${dead.name} exited`;
  };

  try {
    const etcdLog = join(root, 'etcd.log');
    etcd = launch(ETCD, etcdArgs(join(root, 'etcd'), etcdPort, etcdPeerPort), { logFile: etcdLog, cwd: root, env: childEnv() });
    await poll(
      async () => {
        const health = (await (await fetch(`http://127.0.0.1:${etcdPort}/health`, { signal: AbortSignal.timeout(1_000) })).json()) as { health?: string };
        return health.health === 'true' || undefined;
      },
      { timeoutMs: 20_000, what: 'etcd to answer /health', fatal: deadProcess, logs: () => logs([{ label: 'etcd', file: etcdLog }]) },
    );

    const haproxyFile = join(root, 'haproxy.cfg');
    await writeFile(haproxyFile, haproxyConfig(haproxyPort, nodes));
    haproxy = launch(HAPROXY, ['-f', haproxyFile, '-db'], { logFile: join(root, 'haproxy.log'), cwd: root, env: childEnv() });

    const scope = `inferq-ha-${randomBytes(4).toString('hex')}`;
    for (const node of nodes) {
      await mkdir(node.dir, { mode: 0o700 });
      await chown(node.dir, runAs.uid, runAs.gid);
      await writeFile(node.configFile, patroniConfig(node, { scope, etcdPort, synchronous, ...options }), { mode: 0o644 });
    }
    // The first node alone, so it bootstraps (initdb) without a race; the others clone it once it leads.
    launchPatroni(nodes[0]!);
    await poll(async () => leaderOf(await members()), { timeoutMs: startTimeoutMs, what: `${nodes[0]!.name} to bootstrap and lead`, fatal: deadProcess });
    for (const node of nodes.slice(1)) launchPatroni(node);
    await poll(settled, { timeoutMs: startTimeoutMs, what: 'every replica to stream from the primary and the endpoint to take writes', fatal: deadProcess });
    for (const node of nodes) notePostmaster(node);
  } catch (err) {
    await close();
    throw err;
  }

  const primary = async () => {
    const leader = leaderOf(await members());
    if (!leader) throw new Error('Patroni names no running leader');
    return leader;
  };

  const waitForNewPrimary = (old: string, timeoutMs = 60_000) =>
    poll(
      async () => {
        const took = await writeThroughEndpoint();
        return took !== old ? took : undefined;
      },
      { timeoutMs, what: `a primary other than ${old} to take writes through the endpoint` },
    );

  return {
    endpointUrl,
    multiHostUrl: `postgres://postgres@${nodes.map((n) => `127.0.0.1:${n.pgPort}`).join(',')}/postgres?target_session_attrs=read-write`,
    nodes: nodes.map(({ name, pgPort, restPort }) => ({ name, pgPort, restPort })),
    dir: root,
    primary,
    async killPrimary() {
      const name = await primary();
      await killNode(name);
      return name;
    },
    async freezePrimary() {
      const name = await primary();
      const node = byName(name);
      const pm = notePostmaster(node);
      // The postmaster first, so it forks no backend that would answer; then its children and Patroni.
      if (pm) killPid(pm.pid, 'SIGSTOP');
      if (pm) for (const p of processes()) if (p.ppid === pm.pid) killPid(p.pid, 'SIGSTOP');
      node.patroni?.signal('SIGSTOP');
      return name;
    },
    killNode,
    async switchover() {
      // A running candidate; in synchronous mode Patroni switches over only to the synchronous standby, which a
      // primary just promoted names a loop or two after it took over.
      const { from, to } = await poll(
        async () => {
          const ms = await members();
          const leader = leaderOf(ms);
          if (!leader) return undefined;
          const liveNames = new Set(live().map((n) => n.name));
          const candidates = ms.filter((m) => m.name !== leader && m.state === 'running' && liveNames.has(m.name));
          const candidate = (synchronous ? candidates.find((m) => m.role === 'sync_standby') : candidates[0])?.name;
          return candidate ? { from: leader, to: candidate } : undefined;
        },
        { timeoutMs: 30_000, what: `a running leader and a ${synchronous ? 'synchronous standby' : 'running replica'} to switch over to` },
      );
      const started = Date.now();
      await rest(byName(from), '/switchover', { method: 'POST', body: { leader: from, candidate: to }, timeoutMs: 60_000 });
      await poll(async () => ((await writeThroughEndpoint()) === to ? true : undefined), {
        timeoutMs: 60_000,
        what: `${to} to take writes through the endpoint after the switchover`,
      });
      notePostmaster(byName(to));
      return { from, to, ms: Date.now() - started };
    },
    waitForNewPrimary,
    async restartNode(name, timeoutMs = 90_000) {
      const node = byName(name);
      if (node.patroni && !node.patroni.exited()) throw new Error(`${name}'s Patroni is running`);
      launchPatroni(node);
      await poll(
        async () => {
          const ms = await members();
          const me = ms.find((m) => m.name === name);
          const leader = leaderOf(ms);
          if (!leader || leader === name || me?.state !== 'running') return undefined;
          const status = await rest<{ replication?: Array<{ application_name: string; state: string }> }>(byName(leader), '/patroni');
          if (!status.replication?.some((r) => r.application_name === name && r.state === 'streaming')) return undefined;
          // And the group as after startPostgresHa: every replica streaming, with sync one of them synchronous.
          return (await settled()) ? true : undefined;
        },
        {
          timeoutMs,
          what: `${name} to rejoin as a streaming replica`,
          fatal: () => (node.patroni?.exited() ? `patroni ${name} exited` : undefined),
          logs: () => logs([{ label: `patroni ${name}`, file: node.logFile }]),
        },
      );
      notePostmaster(node);
    },
    async pauseReplication() {
      const name = await primary();
      const pm = notePostmaster(byName(name));
      if (!pm) throw new Error(`no postmaster found for the primary ${name}`);
      const walsenders = processes().filter((p) => p.ppid === pm.pid && p.cmdline.includes('walsender'));
      if (walsenders.length === 0) throw new Error(`the primary ${name} has no walsenders`);
      for (const w of walsenders) killPid(w.pid, 'SIGSTOP');
      return async () => {
        for (const w of walsenders) killPid(w.pid, 'SIGCONT');
        await Promise.resolve();
      };
    },
    close,
  };
}
