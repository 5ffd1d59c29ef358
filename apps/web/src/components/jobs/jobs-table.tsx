import { Link } from 'react-router';
import type { JobSummary } from '@inferq/sdk';
import { formatMs, shortId } from '../../lib/format.ts';
import { JobStatusBadge } from '../job-status-badge.tsx';
import { DataTable, type Column } from '../ui/data-table.tsx';
import { RelativeTime } from '../ui/relative-time.tsx';

const COLUMNS: ReadonlyArray<Column<JobSummary>> = [
  {
    header: 'Job',
    cell: (job) => (
      <Link to={`/jobs/${job.id}`} title={job.id} className="font-mono font-medium text-brand underline-offset-2 hover:underline">
        {shortId(job.id)}
      </Link>
    ),
  },
  {
    header: 'Model',
    cell: (job) => (
      <span className="font-mono">
        {job.model}:{job.modelVersion}
      </span>
    ),
  },
  { header: 'Priority', cell: (job) => job.priority },
  {
    header: 'Status',
    cell: (job) => (
      <div className="flex flex-wrap items-center gap-x-2 gap-y-0.5">
        <JobStatusBadge status={job.status} />
        {/* The last failure's code; its message shows on hover and on the job's page. */}
        {job.status === 'failed' && job.error && (
          <span className="font-mono text-xs text-tone-danger" title={job.error.message}>
            {job.error.code}
          </span>
        )}
      </div>
    ),
  },
  { header: 'Created', cell: (job) => <RelativeTime iso={job.createdAt} /> },
  { header: 'Queue wait', cell: (job) => formatMs(job.queueMs), className: 'text-right tabular-nums' },
  { header: 'Inference', cell: (job) => formatMs(job.inferMs), className: 'text-right tabular-nums' },
  { header: 'Batch', cell: (job) => job.batchSize ?? '—', className: 'text-right tabular-nums' },
];

export function JobsTable({ jobs }: { jobs: readonly JobSummary[] }) {
  return <DataTable caption="Jobs" columns={COLUMNS} rows={jobs} rowKey={(job) => job.id} />;
}
