import type { StatsPoint } from '@inferq/contracts';
import { formatClock, formatMs, formatNumber } from '../../lib/format.ts';
import { LineChart, type ChartSeries } from '../ui/line-chart.tsx';

const COLORS = ['var(--color-chart-1)', 'var(--color-chart-2)', 'var(--color-chart-3)'] as const;

const series = (points: readonly StatsPoint[], lines: Array<[label: string, pick: (p: StatsPoint) => number | null]>): ChartSeries[] =>
  lines.map(([label, pick], i) => ({ label, color: COLORS[i % COLORS.length]!, values: points.map(pick) }));

/** Per-minute charts of the stats window: throughput, queue wait and inference time. */
export function StatsCharts({ points }: { points: readonly StatsPoint[] }) {
  const startLabel = points[0] ? formatClock(points[0].at) : '';
  const endLabel = points.length > 0 ? formatClock(points[points.length - 1]!.at) : '';
  const common = { startLabel, endLabel, emptyText: 'No jobs finished in this window' };
  return (
    <div className="grid gap-4 lg:grid-cols-3">
      <LineChart
        {...common}
        title="Jobs per minute"
        emptyText="No jobs in this window"
        formatValue={(v) => formatNumber(v, 0)}
        series={series(points, [
          ['Submitted', (p) => p.submitted],
          ['Completed', (p) => p.completed],
          ['Failed', (p) => p.failed],
        ])}
      />
      <LineChart
        {...common}
        title="Queue wait"
        formatValue={formatMs}
        series={series(points, [
          ['p50', (p) => p.queueMsP50],
          ['p95', (p) => p.queueMsP95],
        ])}
      />
      <LineChart
        {...common}
        title="Inference time"
        formatValue={formatMs}
        series={series(points, [
          ['p50', (p) => p.inferMsP50],
          ['p95', (p) => p.inferMsP95],
        ])}
      />
    </div>
  );
}
