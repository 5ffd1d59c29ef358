import { Link } from 'react-router';
import type { BulkBatch } from '@inferq/sdk';
import { metadataSummary, unixToIso } from '../../lib/bulk-batch.ts';
import { DataTable, type Column } from '../ui/data-table.tsx';
import { RelativeTime } from '../ui/relative-time.tsx';
import { BatchStatusBadge } from './batch-status-badge.tsx';

/** "41 / 100", with the failed among the done beside it. */
function BatchProgressCell({ batch }: { batch: BulkBatch }) {
  const { total, completed, failed } = batch.request_counts;
  return (
    <span className="tabular-nums">
      {completed + failed} / {total}
      {failed > 0 && <span className="ml-2 text-xs text-tone-danger">{failed} failed</span>}
    </span>
  );
}

const COLUMNS: ReadonlyArray<Column<BulkBatch>> = [
  {
    header: 'Batch',
    // The whole id: a batch's page and the API's answers name it so, and its leading digits repeat for batches made together.
    cell: (batch) => (
      <Link to={`/batches/${batch.id}`} className="font-mono font-medium text-brand underline-offset-2 hover:underline">
        {batch.id}
      </Link>
    ),
  },
  { header: 'Status', cell: (batch) => <BatchStatusBadge status={batch.status} /> },
  { header: 'Endpoint', cell: (batch) => <span className="font-mono">{batch.endpoint}</span> },
  { header: 'Progress', cell: (batch) => <BatchProgressCell batch={batch} />, className: 'text-right' },
  { header: 'Created', cell: (batch) => <RelativeTime iso={unixToIso(batch.created_at)} /> },
  {
    header: 'Metadata',
    cell: (batch) => {
      const summary = metadataSummary(batch.metadata);
      return summary === '' ? (
        '—'
      ) : (
        <span className="block max-w-64 truncate font-mono text-xs" title={summary}>
          {summary}
        </span>
      );
    },
  },
];

export function BatchesTable({ batches }: { batches: readonly BulkBatch[] }) {
  return <DataTable caption="Batches" columns={COLUMNS} rows={batches} rowKey={(batch) => batch.id} />;
}
