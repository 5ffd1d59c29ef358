import type { Logger } from './logger.ts';

export interface PeriodicTask {
  start(): void;
  /** Stops the timer and waits for the run in progress, if any; no run starts after it is called. */
  stop(): Promise<void>;
}

/**
 * A repeating duty of a process (a sweep, a heartbeat, a reconcile pass):
 * runs `run` every `intervalMs` (the timer does not keep the process alive);
 * a failed run is logged as "<what> failed" and the next one goes ahead: a
 * warning, or a debug line for a failure `expected` says is told elsewhere (a
 * dependency's outage, which its connection warns of once).
 *
 * Runs never overlap: a tick that comes while a run is in progress is skipped,
 * not queued. Every duty is a pass over whatever is there when it starts (a
 * sweep, a refresh, a beat), so a run started at the end of a slow one would
 * only repeat it, and two at once would race each other over the same rows,
 * keys and models.
 */
export function createPeriodicTask(o: {
  what: string;
  intervalMs: number;
  logger: Logger;
  run: () => Promise<unknown>;
  expected?: (err: Error) => boolean;
}): PeriodicTask {
  let timer: NodeJS.Timeout | undefined;
  /** The run in progress: set while one is, so a tick knows to skip and stop() knows what to wait for. */
  let running: Promise<void> | undefined;
  const tick = (): void => {
    if (running) return;
    running = o
      .run()
      .then(
        () => {},
        (err: Error) => (o.expected?.(err) ? o.logger.debug : o.logger.warn).call(o.logger, { err: err.message }, `${o.what} failed`),
      )
      .finally(() => (running = undefined));
  };
  return {
    start(): void {
      timer = setInterval(tick, o.intervalMs);
      timer.unref();
    },
    async stop(): Promise<void> {
      clearInterval(timer);
      await running;
    },
  };
}
