import { Worker } from 'node:worker_threads';

/**
 * Starts a worker thread on a module file. A `.ts` entry (development,
 * vitest, `node --import tsx`) is loaded through tsx registered inside the
 * thread: on Node 20, `execArgv: ['--import', 'tsx']` does not apply to a
 * worker's entry module (it fails with ERR_UNKNOWN_FILE_EXTENSION), so a
 * one-line bootstrap registers tsx's hooks first and then imports the entry.
 */
export function spawnThread(entry: URL, workerData: unknown): Worker {
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry, { workerData });
  // The ESM build of tsx's API: from an eval'd worker its CommonJS build fails to find its own loader (ERR_MODULE_NOT_FOUND).
  let tsxApi: string;
  try {
    tsxApi = import.meta.resolve('tsx/esm/api');
  } catch (err) {
    throw new Error(`cannot start ${entry.pathname} in a worker thread: loading .ts needs the tsx package, which cannot be resolved`, { cause: err });
  }
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(bootstrap, { eval: true, workerData });
}
