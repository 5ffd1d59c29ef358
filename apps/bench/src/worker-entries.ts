import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEFAULT_PROCESS_HEAP, processHeapNodeFlags } from '@inferq/core';
import { loadBenchEnv } from './bench-env.ts';
import { TIMED_WORKER_ENTRY } from './timed-device/device-time.ts';

/**
 * Where the bench starts its workers from, relative to the repository root: `bundle` (the default) is the worker
 * bundled as the images bundle it (`node scripts/build-server.mjs bench-worker`: our workspaces compiled into one file
 * an entry, the timed device's entry beside them), so the bench times the code the images run; `sources` is the
 * TypeScript through tsx (BENCH_WORKER_FROM=sources), whose CPU profiles name our source files. Under tsx, V8 compiles
 * the same small functions again and again (each module's closures are new ones): side by side the bundle cost 0.78-0.84
 * of the sources' bookkeeping a job (docs/performance.md).
 */
export interface WorkerEntries {
  from: 'bundle' | 'sources';
  /** apps/worker's main. */
  worker: string;
  /** The timed device's worker (timed-device/timed-worker.ts). */
  timedWorker: string;
}

/**
 * What the bench's workers run on, as the images run them: the Node release the images carry
 * (`scripts/images-node-version`, fetched once by scripts/fetch-node.sh into a cache outside the clone; with
 * BENCH_WORKER_NODE=current this process's own, or a path), and the flags the launcher starts a device process with
 * (processHeapNodeFlags at its defaults), since the bench starts its workers without a launcher.
 */
export interface WorkerRuntime {
  node: string;
  version: string;
  nodeArgs: string[];
}

const ROOT = resolve(import.meta.dirname, '../../..');
const BUNDLE_DIR = '.inferq/bench-dist/worker';
const SOURCES: WorkerEntries = { from: 'sources', worker: 'apps/worker/src/main.ts', timedWorker: TIMED_WORKER_ENTRY };
const LAUNCHER_FLAGS = processHeapNodeFlags(DEFAULT_PROCESS_HEAP);

let chosen: WorkerEntries | undefined;

/** The entries BENCH_WORKER_FROM names, the bundle built on the first call of a process. */
export function workerEntries(log: (line: string) => void = console.log): WorkerEntries {
  if (chosen) return chosen;
  const from = loadBenchEnv().BENCH_WORKER_FROM ?? 'bundle';
  if (from === 'sources') return (chosen = SOURCES);
  if (from !== 'bundle') throw new Error(`BENCH_WORKER_FROM is bundle or sources, not "${from}"`);
  try {
    execFileSync(process.execPath, ['scripts/build-server.mjs', 'bench-worker'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    // A kit or checkout that cannot bundle (no esbuild) still runs: from sources, and said so.
    log(`the worker could not be bundled (${(err as Error).message.split('\n')[0]}); its workers run from sources`);
    return (chosen = SOURCES);
  }
  return (chosen = { from, worker: `${BUNDLE_DIR}/main.js`, timedWorker: `${BUNDLE_DIR}/timed-worker.js` });
}

/** The runtime BENCH_WORKER_NODE names: `images` (the default; this process's Node when it cannot be fetched, and said so), `current`, or a path. */
export function workerRuntime(log: (line: string) => void = console.log): WorkerRuntime {
  const wanted = loadBenchEnv().BENCH_WORKER_NODE ?? 'images';
  const current = { node: process.execPath, version: process.versions.node, nodeArgs: LAUNCHER_FLAGS };
  if (wanted === 'current') return current;
  let node = wanted;
  if (wanted === 'images') {
    try {
      const version = readFileSync(resolve(ROOT, 'scripts/images-node-version'), 'utf8').trim();
      const bin = execFileSync('bash', ['scripts/fetch-node.sh', version], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      node = resolve(bin.trim(), 'node');
    } catch (err) {
      log(`the images' Node could not be had (${(err as Error).message.split('\n')[0]}); the workers run on this one, ${current.version}`);
      return current;
    }
  }
  return { node, version: execFileSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim(), nodeArgs: LAUNCHER_FLAGS };
}
