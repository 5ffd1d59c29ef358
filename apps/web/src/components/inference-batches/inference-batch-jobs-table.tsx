import { Link } from 'react-router';
import type { Batch } from '@inferq/contracts';
import { formatMs, shortId } from '../../lib/format.ts';
import { JobStatusBadge } from '../job-status-badge.tsx';
import { DataTable, type Column } from '../ui/data-table.tsx';
import { ShareBar } from '../ui/share-bar.tsx';

type InferenceBatchJob = Batch['jobs'][number];

const columns = (inferMs: number): ReadonlyArray<Column<InferenceBatchJob>> => [
  {
    header: 'Job',
    cell: (job) => (
      <Link to={`/jobs/${job.id}`} title={job.id} className="font-mono font-medium text-brand underline-offset-2 hover:underline">
        {shortId(job.id)}
      </Link>
    ),
  },
  {
    header: 'API key',
    cell: (job) => (
      <span className="font-mono" title={job.ownerKeyId}>
        {shortId(job.ownerKeyId)}
      </span>
    ),
  },
  { header: 'Status', cell: (job) => <JobStatusBadge status={job.status} /> },
  { header: 'Items', cell: (job) => job.items, className: 'text-right tabular-nums' },
  { header: 'Queue wait', cell: (job) => formatMs(job.queueMs), className: 'text-right tabular-nums' },
  { header: 'Device time', cell: (job) => formatMs(job.deviceMs), className: 'text-right tabular-nums' },
  {
    header: 'Share',
    // A failed job is not charged: no share rather than 0%, which would read as "free".
    cell: (job) => (job.deviceMs === null || inferMs <= 0 ? '—' : <ShareBar label={`Share of ${shortId(job.id)}`} fraction={job.deviceMs / inferMs} />),
  },
];

/** The jobs one inference batch ran, each with its share of the batch's device time. */
export function InferenceBatchJobsTable({ batch }: { batch: Batch }) {
  return <DataTable caption="Jobs in this batch" columns={columns(batch.inferMs)} rows={batch.jobs} rowKey={(job) => job.id} />;
}
