import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

const STOP_TIMEOUT_MS = 10_000;

/**
 * A run killed with SIGKILL leaves its postgres behind, holding the data
 * directory, and every later start fails on the lock file. A postmaster whose
 * parent is gone (re-parented to pid 1) is such an orphan: stop it. One with a
 * live parent belongs to another run, and postgres's own error reports it.
 */
export async function stopOrphanedPostmaster(dataDir: string): Promise<void> {
  const pid = await readPostmasterPid(dataDir);
  if (pid === undefined) return;
  // The pid in a stale lock file may since belong to an unrelated process.
  const stat = await readProcessStat(pid);
  if (stat?.command !== 'postgres' || stat.parentPid !== 1) return;
  process.kill(pid, 'SIGINT'); // fast shutdown: roll back open transactions, then exit
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (isAlive(pid)) {
    if (Date.now() > deadline) throw new Error(`an orphaned postgres (pid ${pid}) holds ${dataDir} and did not stop`);
    await delay(50);
  }
}

async function readPostmasterPid(dataDir: string): Promise<number | undefined> {
  const text = await readFile(join(dataDir, 'postmaster.pid'), 'utf8').catch(() => '');
  const pid = Number.parseInt(text.split('\n')[0] ?? '', 10);
  return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? pid : undefined;
}

async function readProcessStat(pid: number): Promise<{ command: string; parentPid: number } | undefined> {
  // /proc/<pid>/stat is "pid (comm) state ppid …"; comm may contain spaces and parentheses.
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (!stat) return undefined;
  const close = stat.lastIndexOf(')');
  const fields = stat.slice(close + 2).split(' ');
  return { command: stat.slice(stat.indexOf('(') + 1, close), parentPid: Number(fields[1]) };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
