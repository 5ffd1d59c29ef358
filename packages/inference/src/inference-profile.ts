/** Weight of the newest sample in each size's running mean and deviation. */
const SMOOTHING = 0.2;
/** Samples a size needs before its own figures are trusted over the line fitted through every size. */
const MIN_SAMPLES = 3;
/** Latest samples the line is fitted through. */
const FIT_WINDOW = 256;

export interface ProfilePoint {
  /** Items in the batch (rows along the batch dimension). */
  items: number;
  /** Running mean of its inference time. */
  inferMs: number;
  /** Running mean absolute deviation: how much one run strays from the mean. */
  deviationMs: number;
  samples: number;
}

/**
 * Inference time per batch size for one model on one device, as measured:
 * a running mean and deviation per size, and a straight line
 * (fixed cost + cost per item) through the latest runs of every size for the
 * sizes not yet seen often. The worker reads it to close batches before
 * their jobs' deadlines, to skip jobs that cannot make theirs, and to choose
 * batch sizes in `auto` mode.
 */
export class InferenceProfile {
  readonly #points = new Map<number, ProfilePoint>();
  readonly #recent: Array<{ items: number; ms: number }> = [];
  /** Running mean and deviation of what a batch takes besides inference (claim, inputs, result write). */
  #overhead: { ms: number; deviationMs: number } | undefined;

  /** One batch's inference time and, optionally, its whole service time (claim to results stored). */
  record(items: number, inferMs: number, serviceMs?: number): void {
    if (!(items >= 1) || !Number.isFinite(inferMs) || inferMs < 0) return;
    if (serviceMs !== undefined && serviceMs >= inferMs) {
      const extra = serviceMs - inferMs;
      if (!this.#overhead) this.#overhead = { ms: extra, deviationMs: 0 };
      else {
        this.#overhead.deviationMs += SMOOTHING * (Math.abs(extra - this.#overhead.ms) - this.#overhead.deviationMs);
        this.#overhead.ms += SMOOTHING * (extra - this.#overhead.ms);
      }
    }
    const p = this.#points.get(items);
    if (!p) this.#points.set(items, { items, inferMs, deviationMs: 0, samples: 1 });
    else {
      p.deviationMs += SMOOTHING * (Math.abs(inferMs - p.inferMs) - p.deviationMs);
      p.inferMs += SMOOTHING * (inferMs - p.inferMs);
      p.samples++;
    }
    this.#recent.push({ items, ms: inferMs });
    if (this.#recent.length > FIT_WINDOW) this.#recent.shift();
  }

  /** Measured sizes, smallest first. */
  curve(): ProfilePoint[] {
    return [...this.#points.values()].sort((a, b) => a.items - b.items).map((p) => ({ ...p }));
  }

  /**
   * Expected inference time of a batch of `items`, with `deviations` running
   * deviations added (2 ≈ a pessimistic run); undefined before any run.
   */
  expectedMs(items: number, deviations = 0): number | undefined {
    const p = this.#points.get(items);
    if (p && p.samples >= MIN_SAMPLES) return p.inferMs + deviations * p.deviationMs;
    const line = this.#fit();
    if (!line) return undefined;
    const spread = this.#meanDeviation();
    return Math.max(0, line.fixedMs + line.perItemMs * items) + deviations * spread;
  }

  /** Mean time a batch takes besides inference (claim, inputs, result write), once measured. */
  overheadMs(): number | undefined {
    return this.#overhead?.ms;
  }

  /** Expected time from a batch's dispatch to its results stored: inference plus the measured overhead. */
  expectedServiceMs(items: number, deviations = 0): number | undefined {
    const infer = this.expectedMs(items, deviations);
    if (infer === undefined) return undefined;
    return infer + (this.#overhead ? this.#overhead.ms + deviations * this.#overhead.deviationMs : 0);
  }

  /** Least squares through the recent runs; with one size seen, time grows in proportion to items. */
  #fit(): { fixedMs: number; perItemMs: number } | undefined {
    const n = this.#recent.length;
    if (n === 0) return undefined;
    let sx = 0;
    let sy = 0;
    for (const r of this.#recent) {
      sx += r.items;
      sy += r.ms;
    }
    const mx = sx / n;
    const my = sy / n;
    let sxx = 0;
    let sxy = 0;
    for (const r of this.#recent) {
      sxx += (r.items - mx) ** 2;
      sxy += (r.items - mx) * (r.ms - my);
    }
    if (sxx === 0) return { fixedMs: 0, perItemMs: my / mx };
    const perItemMs = Math.max(0, sxy / sxx);
    return { fixedMs: Math.max(0, my - perItemMs * mx), perItemMs };
  }

  #meanDeviation(): number {
    const points = [...this.#points.values()];
    return points.reduce((s, p) => s + p.deviationMs, 0) / Math.max(points.length, 1);
  }
}
