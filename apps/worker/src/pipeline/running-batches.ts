import type { Priority } from '@inferq/contracts';
import { classRange } from '@inferq/queue';

/**
 * Batches beyond the batches in flight that may start for jobs of a more urgent class than every batch running: an
 * interactive job that arrives while batch-class batches fill the pipeline is claimed at once, not after one of them.
 */
const OVERTAKING_BATCHES = 1;

/**
 * The batches one model's consumer runs, and the room for the next: under the batches in flight, or, for a job of a
 * more urgent class than every batch running, OVERTAKING_BATCHES more. Priorities are BullMQ's numbers (lower is more
 * urgent), as the batcher holds them.
 */
export class RunningBatches {
  /** Each batch running, with the first number of its most urgent job's class. */
  readonly #running = new Map<Promise<void>, number>();
  readonly #inFlight: () => number;
  readonly #mostUrgentPending: () => number | undefined;
  #wake: (() => void) | undefined;

  constructor(o: { inFlight: () => number; mostUrgentPending: () => number | undefined }) {
    this.#inFlight = o.inFlight;
    this.#mostUrgentPending = o.mostUrgentPending;
  }

  /** A batch started; `lead` is the class of its most urgent job. */
  add(run: Promise<void>, lead: Priority): void {
    this.#running.set(run, classRange(lead).min);
    const ended = () => this.#running.delete(run);
    run.then(ended, ended);
  }

  /**
   * Waits for room for the next batch. Resolves with undefined for a batch in the batches in flight, or with the
   * priority below which a pending job overtakes them (Batcher.next's urgentBelow). A while, not an if: when `auto`
   * lowers the batches in flight, this waits until those running are down to it.
   */
  async room(): Promise<number | undefined> {
    for (;;) {
      if (this.#running.size < this.#inFlight()) return undefined;
      const below = this.#overtakeBelow();
      if (below !== undefined) return below;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        void Promise.race(this.#running.keys()).then(resolve);
      });
      this.#wake = undefined;
    }
  }

  /** A job joined the batcher: a wait for room ends when it may overtake. */
  arrived(): void {
    if (this.#wake && this.#overtakeBelow() !== undefined) this.#wake();
  }

  /** Every batch running, ended. */
  async ended(): Promise<void> {
    await Promise.all(this.#running.keys());
  }

  /** The priority below which a pending job may start a batch beyond the batches in flight now, or undefined. */
  #overtakeBelow(): number | undefined {
    if (this.#running.size === 0 || this.#running.size >= this.#inFlight() + OVERTAKING_BATCHES) return undefined;
    const below = Math.min(...this.#running.values());
    const urgent = this.#mostUrgentPending();
    return urgent !== undefined && urgent < below ? below : undefined;
  }
}
