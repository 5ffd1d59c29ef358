import type { QueueStats } from '@inferq/contracts';
import { formatMs } from '../../lib/format.ts';
import { PausedBadge, QueuePauseControl } from '../models/queue-pause-control.tsx';
import { DataTable, type Column } from '../ui/data-table.tsx';
import { EmptyState } from '../ui/states.tsx';

const count = (n: number) => <span className={`tabular-nums ${n === 0 ? 'text-slate-400' : 'font-medium'}`}>{n}</span>;

const COLUMNS: ReadonlyArray<Column<QueueStats>> = [
  {
    header: 'Model',
    cell: (q) => (
      <span className="inline-flex items-center gap-2">
        <span className="font-mono">{q.model}</span>
        {q.paused && <PausedBadge />}
      </span>
    ),
  },
  { header: 'High', cell: (q) => count(q.high), className: 'text-right' },
  { header: 'Normal', cell: (q) => count(q.normal), className: 'text-right' },
  { header: 'Low', cell: (q) => count(q.low), className: 'text-right' },
  { header: 'Batch', cell: (q) => count(q.batch), className: 'text-right' },
  { header: 'Running', cell: (q) => count(q.active), className: 'text-right' },
  { header: 'Delayed', cell: (q) => count(q.delayed), className: 'text-right' },
  { header: 'Workers', cell: (q) => count(q.workers), className: 'text-right' },
  {
    header: 'Oldest waiting',
    cell: (q) => <span className="tabular-nums">{q.oldestQueuedS === null ? '—' : formatMs(q.oldestQueuedS * 1000)}</span>,
    className: 'text-right',
  },
];

const PAUSE_COLUMN: Column<QueueStats> = { header: 'Queue', cell: (q) => <QueuePauseControl model={q.model} paused={q.paused} />, className: 'text-right' };

/**
 * Jobs waiting per model and priority right now, with those held by workers
 * and backing off, how long the oldest has waited, and whether the queue is
 * paused; `canPause` (admin keys) adds a pause/resume button per queue.
 */
export function QueueDepthTable({ queues, canPause = false }: { queues: readonly QueueStats[]; canPause?: boolean }) {
  if (queues.length === 0) return <EmptyState title="No queues yet">Queues appear when a model is registered.</EmptyState>;
  const columns = canPause ? [...COLUMNS, PAUSE_COLUMN] : COLUMNS;
  return <DataTable caption="Queue depth per model and priority" columns={columns} rows={queues} rowKey={(q) => q.model} />;
}
