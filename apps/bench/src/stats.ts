/** Nearest-rank percentile of unsorted values; null for none. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** The median (nearest rank) of one or more values. */
export const median = (values: readonly number[]): number => percentile(values, 50)!;

export const round = (v: number | null, digits = 2): number | null => (v === null ? null : Number(v.toFixed(digits)));

/** Least-squares slope of y over x (per unit of x); null for fewer than two distinct x. */
export function slope(points: ReadonlyArray<{ x: number; y: number }>): number | null {
  if (points.length < 2) return null;
  const mx = points.reduce((s, p) => s + p.x, 0) / points.length;
  const my = points.reduce((s, p) => s + p.y, 0) / points.length;
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  if (sxx === 0) return null;
  return points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0) / sxx;
}
