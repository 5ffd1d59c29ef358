/** Weight of the newest batch in each stage's running mean. */
const SMOOTHING = 0.2;
/** Below this, a device time is a measurement's noise, not a rate to plan on. */
const MIN_DEVICE_MS = 0.05;

/** One batch's way through a worker: what the batch loop learns from. */
export interface BatchStages {
  /** The session's own run time (measured in its thread: no wait behind other batches). */
  deviceMs: number;
  /**
   * The rest of the batch's way, its wait for the session left out: the claim and the inputs before the run, the
   * result write and the acknowledgement after it.
   */
  aroundMs: number;
}

/**
 * How many batches a model's loop keeps in flight so that its device never
 * waits on the bookkeeping around it: while one batch runs, the next ones are
 * being claimed and the previous ones written, so a batch's whole way
 * (around + device) over its device time, rounded up, keeps the device
 * fed (Little's law on the batch pipeline). A CPU session whose batch takes
 * 30 ms beside 8 ms of bookkeeping wants 2; a GPU batch of 1.2 ms beside the
 * same 8 ms wants 8. Several loops feeding one device (a worker's feeder
 * threads, `feeders`) each keep their share of that, rounded up. Bounded by
 * `max` (more batches in flight hold more jobs locked by one worker, away
 * from the others) and at least `min`.
 */
export class BatchesInFlight {
  readonly #min: number;
  readonly #max: number;
  readonly #feeders: number;
  #stages: BatchStages | undefined;

  /** `feeders`: the loops feeding the same device, this one among them. @default 1 */
  constructor(bounds: { min: number; max: number; feeders?: number }) {
    if (!(bounds.min >= 1 && bounds.max >= bounds.min)) throw new RangeError(`batches in flight: need 1 <= min <= max, not ${bounds.min}..${bounds.max}`);
    const feeders = bounds.feeders ?? 1;
    if (!(Number.isInteger(feeders) && feeders >= 1)) throw new RangeError(`batches in flight: feeders must be a whole number >= 1, not ${feeders}`);
    this.#min = bounds.min;
    this.#max = bounds.max;
    this.#feeders = feeders;
  }

  /** One batch's stages; a stage that is not a finite, non-negative time is ignored with the rest of the batch. */
  observe(batch: BatchStages): void {
    if (![batch.deviceMs, batch.aroundMs].every((v) => Number.isFinite(v) && v >= 0)) return;
    if (!this.#stages) {
      this.#stages = { ...batch };
      return;
    }
    const s = this.#stages;
    s.deviceMs += SMOOTHING * (batch.deviceMs - s.deviceMs);
    s.aroundMs += SMOOTHING * (batch.aroundMs - s.aroundMs);
  }

  /** The running means, or undefined before the first batch. */
  stages(): BatchStages | undefined {
    return this.#stages && { ...this.#stages };
  }

  /** Batches to keep in flight now: `min` until a batch has been measured. */
  target(): number {
    const s = this.#stages;
    if (!s) return this.#min;
    const device = Math.max(s.deviceMs, MIN_DEVICE_MS);
    const wanted = Math.ceil((s.aroundMs + device) / device / this.#feeders);
    return Math.min(this.#max, Math.max(this.#min, wanted));
  }
}
