import type { AdaptiveBatching } from '@inferq/contracts';
import { niceMax } from '../../lib/chart-path.ts';
import { formatItemsPerS } from '../../lib/format.ts';
import { batchSizeTicks, log2Position, toThroughputCurve } from '../../lib/throughput-curve.ts';

const WIDTH = 360;
const HEIGHT = 160;
const PLOT = { left: 56, right: WIDTH - 12, top: 14, bottom: HEIGHT - 34 };
/** Closest two batch-size labels may sit, as a share of the x axis. */
const MIN_TICK_GAP = 0.08;

interface ThroughputCurveChartProps {
  curve: AdaptiveBatching['curve'];
  /** The batch size the worker chose; marked on the x axis. */
  chosenItems: number;
}

/** Items per second against batch size (log2 axis) as a worker measured them, with the chosen size marked. */
export function ThroughputCurveChart({ curve, chosenItems }: ThroughputCurveChartProps) {
  const points = toThroughputCurve(curve);
  if (points.length === 0) return <p className="text-sm text-slate-600">No batch size measured yet.</p>;
  const minItems = points[0]!.items;
  const maxItems = points[points.length - 1]!.items;
  const yMax = niceMax(points.map((p) => p.itemsPerS));
  const x = (items: number) => PLOT.left + log2Position(items, minItems, maxItems) * (PLOT.right - PLOT.left);
  const y = (itemsPerS: number) => PLOT.bottom - (itemsPerS / yMax) * (PLOT.bottom - PLOT.top);
  const path = points.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p.items).toFixed(1)} ${y(p.itemsPerS).toFixed(1)}`).join(' ');
  const label = `Items per second by batch size: ${points.map((p) => `${p.items} → ${formatItemsPerS(p.itemsPerS)}`).join(', ')}; chosen size ${chosenItems}`;
  const chosenX = x(chosenItems);

  return (
    <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={label} className="h-auto w-full max-w-md text-slate-500">
      {[0, 0.5, 1].map((f) => (
        <g key={f}>
          <line x1={PLOT.left} x2={PLOT.right} y1={y(yMax * f)} y2={y(yMax * f)} stroke="currentColor" strokeOpacity={0.25} />
          <text x={PLOT.left - 6} y={y(yMax * f)} dy="0.32em" textAnchor="end" fontSize={10} fill="currentColor">
            {Math.round(yMax * f).toLocaleString()}
          </text>
        </g>
      ))}
      <text x={0} y={8} fontSize={10} fill="currentColor">
        items/s
      </text>
      <line x1={chosenX} x2={chosenX} y1={PLOT.top} y2={PLOT.bottom} stroke="var(--color-chart-2)" strokeDasharray="4 3" />
      <text x={chosenX} y={PLOT.top - 4} textAnchor="middle" fontSize={10} fill="var(--color-chart-2)">
        chosen {chosenItems}
      </text>
      <path d={path} fill="none" stroke="var(--color-chart-1)" strokeWidth={2} strokeLinejoin="round" />
      {points.map((p) => (
        <circle
          key={p.items}
          cx={x(p.items)}
          cy={y(p.itemsPerS)}
          r={p.items === chosenItems ? 4.5 : 3}
          fill={p.items === chosenItems ? 'var(--color-chart-2)' : 'var(--color-chart-1)'}
        />
      ))}
      {batchSizeTicks(minItems, maxItems, MIN_TICK_GAP).map((size) => (
        <text key={size} x={x(size)} y={PLOT.bottom + 14} textAnchor="middle" fontSize={10} fill="currentColor">
          {size}
        </text>
      ))}
      <text x={(PLOT.left + PLOT.right) / 2} y={HEIGHT - 4} textAnchor="middle" fontSize={10} fill="currentColor">
        batch size (log scale)
      </text>
    </svg>
  );
}
