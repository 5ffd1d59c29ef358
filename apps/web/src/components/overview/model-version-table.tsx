import type { ModelVersionStats } from '@inferq/contracts';
import { DataTable, type Column } from '../ui/data-table.tsx';
import { EmptyState } from '../ui/states.tsx';
import { formatMs, formatNumber, formatPercent, formatRate } from '../../lib/format.ts';

const num = (text: string) => <span className="tabular-nums">{text}</span>;

const COLUMNS: ReadonlyArray<Column<ModelVersionStats>> = [
  {
    header: 'Model',
    cell: (m) => (
      <span className="font-mono">
        {m.model}:{m.version}
      </span>
    ),
  },
  { header: 'Jobs/s (window)', cell: (m) => num(formatRate(m.completedPerSec)), className: 'text-right' },
  // Counts next to the rate: a canary's error rate over a handful of jobs means little.
  { header: 'Completed', cell: (m) => num(m.completed.toLocaleString()), className: 'text-right' },
  { header: 'Failed', cell: (m) => num(m.failed.toLocaleString()), className: 'text-right' },
  { header: 'Error rate', cell: (m) => num(formatPercent(m.errorRate)), className: 'text-right' },
  { header: 'Queue p50', cell: (m) => num(formatMs(m.queueMsP50)), className: 'text-right' },
  { header: 'Queue p95', cell: (m) => num(formatMs(m.queueMsP95)), className: 'text-right' },
  { header: 'Queue p99', cell: (m) => num(formatMs(m.queueMsP99)), className: 'text-right' },
  { header: 'Inference p50', cell: (m) => num(formatMs(m.inferMsP50)), className: 'text-right' },
  { header: 'Inference p95', cell: (m) => num(formatMs(m.inferMsP95)), className: 'text-right' },
  { header: 'Inference p99', cell: (m) => num(formatMs(m.inferMsP99)), className: 'text-right' },
  { header: 'Avg batch', cell: (m) => num(formatNumber(m.avgBatchSize)), className: 'text-right' },
];

/** Finished jobs per model version over the window: side by side, a canary can be judged against the version it replaces. */
export function ModelVersionTable({ models }: { models: readonly ModelVersionStats[] }) {
  if (models.length === 0) return <EmptyState title="No finished jobs in this window">Figures appear per model version as jobs finish.</EmptyState>;
  return <DataTable caption="Finished jobs per model version" columns={COLUMNS} rows={models} rowKey={(m) => `${m.model}:${m.version}`} />;
}
