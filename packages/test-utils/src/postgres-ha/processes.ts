import { execFile, spawn } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

// The processes of a Postgres HA group: each in a process group of its own (detached), its output appended to a log
// file, so a kill takes its children with it (Patroni's initdb, pg_basebackup, pg_rewind) and a failure can quote the log.

export interface UserIds {
  uid: number;
  gid: number;
}

export interface Launched {
  readonly pid: number;
  readonly logFile: string;
  /** True once the process has exited (or never started). */
  exited(): boolean;
  /** Resolves when it has exited. */
  readonly exit: Promise<void>;
  /** A signal to its whole process group. */
  signal(signal: NodeJS.Signals): void;
}

/** Variables that would steer libpq, etcd or Python away from the configuration we write. */
const STRIPPED = /^(PG|ETCD_|PATRONI_|PYTHON)/;

export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!STRIPPED.test(k)) env[k] = v;
  // Messages in English (readiness and errors are read from logs), and a locale Python and initdb both accept.
  return { ...env, LC_ALL: 'C.UTF-8', LANG: 'C.UTF-8', LC_MESSAGES: 'C', ...extra };
}

export function launch(command: string, args: string[], options: { logFile: string; cwd: string; runAs?: UserIds; env?: NodeJS.ProcessEnv }): Launched {
  const fd = openSync(options.logFile, 'a');
  let done = false;
  let child;
  try {
    child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? childEnv(),
      detached: true,
      stdio: ['ignore', fd, fd],
      ...(options.runAs ? { uid: options.runAs.uid, gid: options.runAs.gid } : {}),
    });
  } finally {
    closeSync(fd);
  }
  const exit = new Promise<void>((resolve) => {
    const finish = () => {
      done = true;
      resolve();
    };
    child.once('exit', finish);
    child.once('error', () => {
      if (child.pid === undefined) finish();
    });
  });
  const pid = child.pid ?? -1;
  return {
    pid,
    logFile: options.logFile,
    exited: () => done,
    exit,
    signal(signal) {
      if (!done && pid > 0) killGroup(pid, signal);
    },
  };
}

/** A signal to a process group; a group that is gone already is no error. */
export function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

export function killPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
  cmdline: string;
}

function readProc(pid: number): ProcInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses, so read after the last ')'.
    const [, ppid, pgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    return { pid, ppid: Number(ppid), pgid: Number(pgid), cmdline };
  } catch {
    return undefined; // gone meanwhile, or a kernel thread
  }
}

export function processes(): ProcInfo[] {
  const found: ProcInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const info = readProc(Number(entry));
    if (info) found.push(info);
  }
  return found;
}

export function commandLineOf(pid: number): string | undefined {
  return readProc(pid)?.cmdline;
}

/** The postmaster serving `dataDir`, from its postmaster.pid, when that process is alive and is that postmaster. */
export function postmasterOf(dataDir: string): { pid: number; pgid: number } | undefined {
  let text;
  try {
    text = readFileSync(`${dataDir}/postmaster.pid`, 'utf8');
  } catch {
    return undefined;
  }
  const pid = Number(text.split('\n')[0]);
  if (!(pid > 0)) return undefined;
  const info = readProc(pid);
  if (!info?.cmdline.includes(dataDir)) return undefined;
  return { pid, pgid: info.pgid };
}

/**
 * Postgres's children each call setsid(), so the postmaster's process group is the postmaster alone: SIGKILL it and its
 * children would live on until they notice (a SIGSTOPped walsender, not before SIGCONT, and then it may still send WAL).
 * A dead host's processes all die at once: for SIGKILL the postmaster is stopped first (it forks nothing more), then every
 * child and the postmaster are killed. SIGCONT goes to the children too (a paused walsender); other signals, such as
 * SIGQUIT (immediate shutdown), to the postmaster alone, which passes them on.
 */
export function signalPostmaster(pid: number, signal: NodeJS.Signals): void {
  if (signal === 'SIGKILL') killPid(pid, 'SIGSTOP');
  if (signal === 'SIGKILL' || signal === 'SIGCONT') for (const child of processes().filter((p) => p.ppid === pid)) killPid(child.pid, signal);
  killPid(pid, signal);
}

/** The SysV segment a postmaster.pid names (line 7: key and id), to remove after a SIGKILL left it behind. */
export function sharedMemoryOf(dataDir: string): number | undefined {
  try {
    const line = readFileSync(`${dataDir}/postmaster.pid`, 'utf8').split('\n')[6];
    const id = Number(line?.trim().split(/\s+/)[1]);
    return Number.isInteger(id) && id >= 0 ? id : undefined;
  } catch {
    return undefined;
  }
}

/** Removes SysV segment `id` when nothing is attached to it any more (a SIGKILLed postmaster cannot). */
export async function removeOrphanedSegment(id: number): Promise<void> {
  const table = await readFile('/proc/sysvipc/shm', 'utf8').catch(() => '');
  // key shmid perms size cpid lpid nattch …
  const row = table
    .split('\n')
    .slice(1)
    .map((l) => l.trim().split(/\s+/))
    .find((cols) => Number(cols[1]) === id);
  if (!row || Number(row[6]) !== 0) return;
  await new Promise<void>((resolve) => execFile('ipcrm', ['-m', String(id)], { timeout: 5_000 }, () => resolve()));
}

/** The last lines of a log, for an error message. */
export function tail(file: string, lines = 40): string {
  try {
    const text = readFileSync(file, 'utf8').trimEnd().split('\n');
    return text.slice(-lines).join('\n');
  } catch (err) {
    return `(no log: ${(err as Error).message})`;
  }
}
