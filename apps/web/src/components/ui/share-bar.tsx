import { formatPercent } from '../../lib/format.ts';

/** A share of a whole as a short bar and its percentage, for table cells; `label` names it for assistive tech. */
export function ShareBar({ label, fraction }: { label: string; fraction: number }) {
  const percent = Math.min(100, Math.max(0, fraction * 100));
  const text = formatPercent(fraction);
  return (
    <div
      role="meter"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={percent}
      aria-valuetext={text}
      className="flex items-center gap-2"
    >
      <div className="h-2 w-24 overflow-hidden rounded-full bg-slate-200">
        <div className="h-full rounded-full bg-chart-1" style={{ width: `${percent}%` }} />
      </div>
      <span className="w-12 text-right tabular-nums">{text}</span>
    </div>
  );
}
