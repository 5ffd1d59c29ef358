/** Nearest-rank percentile of unsorted values; null for none. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** The median (nearest rank) of one or more values. */
export const median = (values: readonly number[]): number => percentile(values, 50)!;

export const round = (v: number | null, digits = 2): number | null => (v === null ? null : Number(v.toFixed(digits)));
