import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from './logger.ts';
import { createPeriodicTask } from './periodic-task.ts';

const INTERVAL_MS = 1_000;

/** A run the test ends when it chooses. */
function pendingRun() {
  let end!: () => void;
  let fail!: (err: Error) => void;
  const done = new Promise<void>((resolve, reject) => ((end = resolve), (fail = reject)));
  return { done, end, fail };
}

/** A task whose runs are counted, each ended by the test; `inFlight` and `mostAtOnce` show any overlap. */
function countedTask() {
  const runs: ReturnType<typeof pendingRun>[] = [];
  const seen = { inFlight: 0, mostAtOnce: 0 };
  const logger = createLogger({ service: 'periodic-task-test', level: 'silent' });
  const task = createPeriodicTask({
    what: 'counted',
    intervalMs: INTERVAL_MS,
    logger,
    run: async () => {
      const run = pendingRun();
      runs.push(run);
      seen.mostAtOnce = Math.max(seen.mostAtOnce, ++seen.inFlight);
      try {
        await run.done;
      } finally {
        seen.inFlight--;
      }
    },
  });
  return { task, runs, seen, logger };
}

/** Whether a promise has settled, once the microtasks queued so far have run. */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await vi.advanceTimersByTimeAsync(0);
  return settled;
}

describe('createPeriodicTask', () => {
  // Fake timers: the ticks come when the test moves the clock, so nothing here sleeps or races a real timer.
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('never starts a run while one is in progress: the ticks that come during it are skipped, not queued', async () => {
    const { task, runs, seen } = countedTask();
    task.start();
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(runs).toHaveLength(1);

    // Five ticks while the first run is still going.
    await vi.advanceTimersByTimeAsync(5 * INTERVAL_MS);
    expect(runs).toHaveLength(1);

    // Ended: nothing runs at once to make up for the skipped ticks; the next tick runs again.
    runs[0]!.end();
    await vi.advanceTimersByTimeAsync(0);
    expect(runs).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(runs).toHaveLength(2);
    expect(seen.mostAtOnce).toBe(1);

    runs[1]!.end();
    await task.stop();
  });

  it('goes on after a failed run, which is logged', async () => {
    const { task, runs, seen, logger } = countedTask();
    const warn = vi.spyOn(logger, 'warn');
    task.start();
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    runs[0]!.fail(new Error('down'));
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(warn).toHaveBeenCalledWith({ err: 'down' }, 'counted failed');
    expect(runs).toHaveLength(2);
    expect(seen.mostAtOnce).toBe(1);
    runs[1]!.end();
    await task.stop();
  });

  it('stop() waits for the run in progress, though ticks came since it started, and no run starts after it', async () => {
    const { task, runs } = countedTask();
    task.start();
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    // Ticks after the run started. Had they started runs of their own (ended here at once), stop() would have waited
    // for the last of those and missed the first, still going.
    await vi.advanceTimersByTimeAsync(3 * INTERVAL_MS);
    for (const later of runs.slice(1)) later.end();

    const stopped = task.stop();
    expect(await isSettled(stopped)).toBe(false);

    runs[0]!.end();
    await stopped;
    await vi.advanceTimersByTimeAsync(5 * INTERVAL_MS);
    expect(runs).toHaveLength(1);
  });

  it('stop() waits for a later run as well as the first, and resolves when the run in progress fails', async () => {
    const { task, runs } = countedTask();
    task.start();
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    runs[0]!.end();
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(runs).toHaveLength(2);

    const stopped = task.stop();
    expect(await isSettled(stopped)).toBe(false);
    runs[1]!.fail(new Error('down'));
    await stopped;
  });

  it('stop() resolves at once when no run is in progress, or the task never started', async () => {
    const { task } = countedTask();
    expect(await isSettled(task.stop())).toBe(true);
    task.start();
    expect(await isSettled(task.stop())).toBe(true);
  });
});
