import { Type, type Static, type TObject } from '@sinclair/typebox';

const OLD_SPACE_FLAG = '--initial-old-space-size';

/** The V8 heap a process that moves a lot of data through a small live heap starts with (the worker's device processes). */
export const processHeapConfig = {
  /**
   * Where V8 starts each of the process's heaps (its old generation, per thread: V8's flags are the process's), in MB,
   * as `--initial-old-space-size`. A worker's device process keeps a small live heap (~25 MB) while allocating fast, and
   * V8's own sizing kept it marking nearly all the time (docs/performance.md, "The device process's heap"). 0 leaves
   * V8's sizing.
   */
  WORKER_OLD_SPACE_INITIAL_MB: Type.Integer({ default: 256, minimum: 0, maximum: 65_536 }),
};
export type ProcessHeapConfig = Static<TObject<typeof processHeapConfig>>;

/** The setting's default, for whoever starts such a process without reading a configuration (the bench). */
export const DEFAULT_PROCESS_HEAP: ProcessHeapConfig = { WORKER_OLD_SPACE_INITIAL_MB: processHeapConfig.WORKER_OLD_SPACE_INITIAL_MB.default };

/**
 * The Node flags to start such a process with: `execArgv` (the starter's own), and V8's initial old-space size unless
 * it is 0 or the flags already set it. The worker's launcher starts each device process with these; the bench starts
 * its workers (without a launcher) with the same.
 */
export function processHeapNodeFlags(config: ProcessHeapConfig, execArgv: readonly string[] = []): string[] {
  const mb = config.WORKER_OLD_SPACE_INITIAL_MB;
  const given = execArgv.some((a) => a === OLD_SPACE_FLAG || a.startsWith(`${OLD_SPACE_FLAG}=`));
  return mb === 0 || given ? [...execArgv] : [...execArgv, `${OLD_SPACE_FLAG}=${mb}`];
}
