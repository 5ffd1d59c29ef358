import { linePath, niceMax } from '../../lib/chart-path.ts';

export interface ChartSeries {
  label: string;
  /** A CSS colour, normally a chart token: `var(--color-chart-1)`. */
  color: string;
  values: ReadonlyArray<number | null>;
}

interface LineChartProps {
  title: string;
  series: readonly ChartSeries[];
  /** Label of the first and last point (the window's ends). */
  startLabel: string;
  endLabel: string;
  formatValue: (value: number) => string;
  emptyText: string;
}

const WIDTH = 600;
const HEIGHT = 160;
const GRID = [0, 0.5, 1];

const latest = (values: ReadonlyArray<number | null>): number | null => [...values].reverse().find((v) => v !== null) ?? null;

/** A small responsive SVG line chart: one line per series, gaps where nothing was measured. */
export function LineChart({ title, series, startLabel, endLabel, formatValue, emptyText }: LineChartProps) {
  const yMax = niceMax(series.flatMap((s) => s.values));
  const hasData = series.some((s) => latest(s.values) !== null);
  const summary = hasData ? `${title}, latest: ${series.map((s) => `${s.label} ${formatLatest(s.values, formatValue)}`).join(', ')}` : `${title}: ${emptyText}`;
  return (
    <figure className="rounded-lg bg-white p-4 shadow-sm ring-1 ring-slate-200">
      <figcaption className="text-sm font-semibold text-slate-800">{title}</figcaption>
      <div className="relative mt-3 h-40 pl-14">
        {GRID.map((f) => (
          <span
            key={f}
            className="absolute left-0 w-12 -translate-y-1/2 text-right text-[11px] text-slate-500 tabular-nums"
            style={{ top: `${(1 - f) * 100}%` }}
          >
            {formatValue(yMax * f)}
          </span>
        ))}
        <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} preserveAspectRatio="none" role="img" aria-label={summary} className="h-full w-full overflow-visible">
          {GRID.map((f) => (
            <line
              key={f}
              x1={0}
              x2={WIDTH}
              y1={HEIGHT * (1 - f)}
              y2={HEIGHT * (1 - f)}
              stroke="currentColor"
              className="text-slate-200"
              vectorEffect="non-scaling-stroke"
            />
          ))}
          {series.map((s) => (
            <path
              key={s.label}
              d={linePath(s.values, WIDTH, HEIGHT, yMax)}
              fill="none"
              stroke={s.color}
              strokeWidth={2}
              strokeLinecap="round"
              strokeLinejoin="round"
              vectorEffect="non-scaling-stroke"
            />
          ))}
        </svg>
        {!hasData && <p className="absolute inset-0 flex items-center justify-center pl-14 text-sm text-slate-500">{emptyText}</p>}
      </div>
      <div className="mt-1 flex justify-between pl-14 text-[11px] text-slate-500">
        <span>{startLabel}</span>
        <span>{endLabel}</span>
      </div>
      <ul className="mt-3 flex flex-wrap gap-x-4 gap-y-1 text-xs text-slate-700">
        {series.map((s) => (
          <li key={s.label} className="flex items-center gap-1.5">
            <span aria-hidden="true" className="h-0.5 w-4 rounded" style={{ backgroundColor: s.color }} />
            {s.label}: <span className="font-medium tabular-nums">{formatLatest(s.values, formatValue)}</span>
          </li>
        ))}
      </ul>
    </figure>
  );
}

function formatLatest(values: ReadonlyArray<number | null>, formatValue: (value: number) => string): string {
  const value = latest(values);
  return value === null ? '—' : formatValue(value);
}
