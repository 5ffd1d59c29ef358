import type { InferenceProfile } from './inference-profile.ts';

export interface AdaptiveBounds {
  /** The largest batch the model allows (its maxBatchSize). */
  maxBatchSize: number;
  /** The longest delay the model allows (its maxBatchDelayMs). */
  maxBatchDelayMs: number;
  /** The p99 queue wait to stay under. */
  latencyTargetMs: number;
}

export interface BatchingChoice {
  maxBatchSize: number;
  maxBatchDelayMs: number;
  /** Expected items per second at that size, by the profile. */
  itemsPerS: number | null;
  /** Why this choice, in a few words. */
  reason: string;
}

/** Sizes within this fraction of the best throughput count as equal; the largest of them is taken, so larger batches get measured. */
const THROUGHPUT_TOLERANCE = 0.05;

/** Sizes worth considering: powers of two up to the bound, the bound itself, and every size measured. */
function candidateSizes(profile: InferenceProfile, max: number): number[] {
  const sizes = new Set<number>([max]);
  for (let b = 1; b < max; b *= 2) sizes.add(b);
  for (const p of profile.curve()) if (p.items <= max) sizes.add(p.items);
  return [...sizes].sort((a, b) => a - b);
}

/**
 * The batch size and delay that maximise throughput (items per second of a
 * batch's inference plus the bookkeeping every batch pays besides it —
 * claim, inputs, result write — by the measured profile; that overhead is
 * paid per batch by the same host, so where inference alone barely favours
 * a size, a larger batch still spreads it) while a job's queue wait stays under
 * the target. A job waits at most for its batch to fill (the delay) plus one
 * batch already running ahead of it and its own: so a size is allowed when
 * two of its runs fit in the target, and the delay gets what is left.
 * Unmeasured sizes are extrapolated by the profile's fitted line; while one
 * size alone has been seen, time is taken as proportional to items, every
 * size ties, and the largest allowed one is taken: load then brings larger
 * batches, whose measured times settle the choice.
 */
export function chooseBatching(profile: InferenceProfile, bounds: AdaptiveBounds): BatchingChoice {
  const runs = candidateSizes(profile, bounds.maxBatchSize).map((items) => ({ items, ms: profile.expectedMs(items) }));
  if (runs.some((r) => r.ms === undefined)) {
    return {
      maxBatchSize: bounds.maxBatchSize,
      maxBatchDelayMs: Math.min(bounds.maxBatchDelayMs, bounds.latencyTargetMs / 2),
      itemsPerS: null,
      reason: 'not measured yet: the bounds',
    };
  }
  const overheadMs = profile.overheadMs() ?? 0;
  const measured = runs.map((r) => {
    const costMs = r.ms! + overheadMs;
    return { items: r.items, ms: r.ms!, itemsPerS: costMs > 0 ? (r.items * 1000) / costMs : Infinity };
  });
  const allowed = measured.filter((r) => 2 * r.ms <= bounds.latencyTargetMs);
  if (allowed.length === 0) {
    return { maxBatchSize: 1, maxBatchDelayMs: 0, itemsPerS: measured[0]!.itemsPerS, reason: 'one item already takes over half the latency target' };
  }
  const best = Math.max(...allowed.map((r) => r.itemsPerS));
  const pick = allowed.findLast((r) => r.itemsPerS >= best * (1 - THROUGHPUT_TOLERANCE))!;
  const maxBatchDelayMs = Math.max(0, Math.min(bounds.maxBatchDelayMs, bounds.latencyTargetMs - 2 * pick.ms));
  const limited = allowed.length < measured.length ? `; larger batches would break the ${bounds.latencyTargetMs} ms target` : '';
  return {
    maxBatchSize: pick.items,
    maxBatchDelayMs: Math.round(maxBatchDelayMs * 10) / 10,
    itemsPerS: pick.itemsPerS,
    reason: `best throughput within ${THROUGHPUT_TOLERANCE * 100}%${limited}`,
  };
}
