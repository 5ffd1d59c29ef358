/** A round upper bound for a chart's y axis: 1, 2 or 5 times a power of ten, at least the largest value. */
export function niceMax(values: ReadonlyArray<number | null>): number {
  const max = Math.max(0, ...values.filter((v): v is number => v !== null && Number.isFinite(v)));
  if (max === 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  const step = [1, 2, 5, 10].find((m) => m * power >= max) ?? 10;
  return step * power;
}

/**
 * SVG path data for a series drawn across `width` × `height`, y growing down.
 * Nulls (minutes with nothing measured) break the line; a lone point is drawn
 * as a zero-length segment, which a round line cap shows as a dot.
 */
export function linePath(values: ReadonlyArray<number | null>, width: number, height: number, yMax: number): string {
  const stepX = values.length > 1 ? width / (values.length - 1) : 0;
  const segments: string[][] = [];
  let current: string[] | undefined;
  values.forEach((v, i) => {
    if (v === null || !Number.isFinite(v)) {
      current = undefined;
      return;
    }
    const point = `${round(i * stepX)} ${round(height - (Math.min(v, yMax) / yMax) * height)}`;
    if (!current) segments.push((current = []));
    current.push(point);
  });
  return segments.map(([first, ...rest]) => (rest.length === 0 ? `M${first} l0 0` : `M${first} ${rest.map((p) => `L${p}`).join(' ')}`)).join(' ');
}

const round = (n: number): number => Math.round(n * 100) / 100;
