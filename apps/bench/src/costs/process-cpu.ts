import { readdirSync, readFileSync } from 'node:fs';

/** /proc reports CPU times in USER_HZ ticks, which Linux fixes at 100 a second for userland. */
const TICKS_PER_S = 100;

/** What one /proc/<pid>/stat (or /proc/<pid>/task/<tid>/stat) line says, CPU in seconds. */
export interface ProcStat {
  comm: string;
  ppid: number;
  /** user + system time of this process (all its threads) or of this thread. */
  cpuS: number;
  /** user + system time of its children that have exited and been waited for. */
  reapedChildrenCpuS: number;
}

/** Parses a /proc stat line; the command name (field 2) may hold spaces and parentheses, so fields are counted from the last `)`. */
export function parseProcStat(line: string): ProcStat {
  const close = line.lastIndexOf(')');
  // After the name: state (3), ppid (4), …, utime (14), stime (15), cutime (16), cstime (17).
  const f = line.slice(close + 2).split(' ');
  return {
    comm: line.slice(line.indexOf('(') + 1, close),
    ppid: Number(f[1]),
    cpuS: (Number(f[11]) + Number(f[12])) / TICKS_PER_S,
    reapedChildrenCpuS: (Number(f[13]) + Number(f[14])) / TICKS_PER_S,
  };
}

const readStat = (path: string): ProcStat | null => {
  try {
    return parseProcStat(readFileSync(path, 'utf8'));
  } catch {
    return null; // off Linux, or the process is gone
  }
};

/** CPU seconds (user + system, all threads) process `pid` has used so far, from /proc/<pid>/stat; null off Linux. */
export function processCpuSeconds(pid: number): number | null {
  return readStat(`/proc/${pid}/stat`)?.cpuS ?? null;
}

/** The command name of process `pid` (`postgres`, `redis-server`, `node`); null when there is none to read. */
export const processName = (pid: number): string | null => readStat(`/proc/${pid}/stat`)?.comm ?? null;

/** The parent of process `pid`; null when there is none to read. */
export const parentPid = (pid: number): number | null => readStat(`/proc/${pid}/stat`)?.ppid ?? null;

/** Every process's parent, from one pass over /proc (a reading of several trees shares one). */
export function readParents(): Map<number, number> {
  const map = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return map;
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(`/proc/${name}/stat`);
    if (stat) map.set(Number(name), stat.ppid);
  }
  return map;
}

/**
 * CPU seconds process `pid` and every descendant ever used: its own, its live descendants' and its reaped children's
 * (cutime, which holds what exited processes used, so a Postgres backend that ends within a span still counts). The
 * figure only grows, so a difference of two readings is what the tree used in between. Null when `pid` is gone.
 */
export function processTreeCpuSeconds(pid: number, parentOf: Map<number, number> = readParents()): number | null {
  const root = readStat(`/proc/${pid}/stat`);
  if (!root) return null;
  let total = root.cpuS + root.reapedChildrenCpuS;
  for (const [child, parent] of parentOf) if (parent === pid) total += processTreeCpuSeconds(child, parentOf) ?? 0;
  return total;
}

/** One reading of process `pid`'s threads: CPU seconds by thread id (the main thread's id is the pid). */
export function threadCpuSeconds(pid: number): Map<number, number> {
  const byTid = new Map<number, number>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return byTid;
  }
  for (const tid of tids) {
    const stat = readStat(`/proc/${pid}/task/${tid}/stat`);
    if (stat) byTid.set(Number(tid), stat.cpuS);
  }
  return byTid;
}

/**
 * A worker process's CPU between two readings of its threads, split three ways. `main`: the main thread (thread id =
 * pid: the event loop, where claims, input decoding, result writes and acknowledgements run). `session`: the busiest
 * other thread over the span, which is the session thread running `session.run` whenever inference is most of the work
 * (Node 20 names every thread `node`, so /proc cannot tell them apart by name). `other`: the rest (V8's GC and compiler
 * threads, libuv's pool, onnxruntime's intra-op pool when it has more than one thread). A thread that ended between
 * the readings is lost: the split covers threads alive at the second reading.
 */
export function splitThreadCpu(pid: number, before: Map<number, number>, after: Map<number, number>): { main: number; session: number; other: number } {
  const deltas = [...after].map(([tid, s]) => ({ tid, s: s - (before.get(tid) ?? 0) }));
  const main = deltas.find((d) => d.tid === pid)?.s ?? 0;
  const others = deltas.filter((d) => d.tid !== pid).sort((a, b) => b.s - a.s);
  const session = others[0]?.s ?? 0;
  return { main, session, other: others.slice(1).reduce((n, d) => n + d.s, 0) };
}

/** Starts a CPU stopwatch on process `pid`; `stop()` gives the CPU seconds it used in between (null off Linux). */
export function cpuStopwatch(pid: number | undefined): { stop(): number | null } {
  const start = pid === undefined ? null : processCpuSeconds(pid);
  return {
    stop: () => {
      const end = start === null ? null : processCpuSeconds(pid!);
      return start === null || end === null ? null : end - start;
    },
  };
}

/** CPU milliseconds per MiB of request bodies received. */
export const cpuMsPerMiB = (cpuS: number | null, bodyBytes: number): number | null =>
  cpuS === null || bodyBytes === 0 ? null : (cpuS * 1000) / (bodyBytes / 2 ** 20);
