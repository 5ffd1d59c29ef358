import type { AdaptiveBatching } from '@inferq/contracts';

type ProfilePoint = AdaptiveBatching['curve'][number];

export interface ThroughputPoint {
  items: number;
  itemsPerS: number;
}

/** What each measured batch size sustains run back to back (items per second), smallest size first; unmeasured times are left out. */
export const toThroughputCurve = (curve: readonly ProfilePoint[]): ThroughputPoint[] =>
  curve
    .filter((p) => p.items > 0 && p.inferMs > 0)
    .map((p) => ({ items: p.items, itemsPerS: (p.items * 1000) / p.inferMs }))
    .sort((a, b) => a.items - b.items);

/**
 * Where batch size `items` sits between the smallest and largest measured, 0 to 1, on a log2 scale:
 * sizes are tried in doublings, so a linear axis would crowd the small ones together. Sizes outside
 * the range are clamped; a single measured size sits in the middle.
 */
export function log2Position(items: number, minItems: number, maxItems: number): number {
  if (maxItems <= minItems) return 0.5;
  const position = (Math.log2(items) - Math.log2(minItems)) / (Math.log2(maxItems) - Math.log2(minItems));
  return Math.min(1, Math.max(0, position));
}

/**
 * Batch sizes to label on the log2 axis: the smallest and largest measured and the powers of two
 * between them, leaving out any closer than `minGap` (0 to 1 of the axis) to one already labelled.
 */
export function batchSizeTicks(minItems: number, maxItems: number, minGap: number): number[] {
  const powers = Array.from(
    { length: Math.max(0, Math.floor(Math.log2(maxItems)) - Math.ceil(Math.log2(minItems)) + 1) },
    (_, i) => 2 ** (Math.ceil(Math.log2(minItems)) + i),
  );
  const ticks = [minItems, maxItems];
  for (const size of powers) {
    const at = log2Position(size, minItems, maxItems);
    if (ticks.every((t) => Math.abs(log2Position(t, minItems, maxItems) - at) >= minGap)) ticks.push(size);
  }
  return [...new Set(ticks)].sort((a, b) => a - b);
}
