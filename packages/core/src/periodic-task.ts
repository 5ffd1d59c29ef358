import type { Logger } from './logger.ts';

export interface PeriodicTask {
  start(): void;
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
}

/**
 * A repeating duty of a process (a sweep, a heartbeat, a reconcile pass):
 * runs `run` every `intervalMs` (the timer does not keep the process alive);
 * a failed run is logged as "<what> failed" and the next one goes ahead: a
 * warning, or a debug line for a failure `expected` says is told elsewhere (a
 * dependency's outage, which its connection warns of once).
 */
export function createPeriodicTask(o: {
  what: string;
  intervalMs: number;
  logger: Logger;
  run: () => Promise<unknown>;
  expected?: (err: Error) => boolean;
}): PeriodicTask {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  return {
    start(): void {
      timer = setInterval(() => {
        running = o.run().catch((err: Error) => (o.expected?.(err) ? o.logger.debug : o.logger.warn).call(o.logger, { err: err.message }, `${o.what} failed`));
      }, o.intervalMs);
      timer.unref();
    },
    async stop(): Promise<void> {
      clearInterval(timer);
      await running;
    },
  };
}
