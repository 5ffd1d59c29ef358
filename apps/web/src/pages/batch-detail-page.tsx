import { Link, useParams } from 'react-router';
import { isBatchEnded, type BulkBatch } from '@inferq/sdk';
import { downloadFile } from '../api/file-download.ts';
import { useBatch } from '../api/queries/batches.ts';
import { useMe } from '../api/queries/me.ts';
import { hasScope } from '../auth/permissions.ts';
import { BatchFileErrors } from '../components/batches/batch-file-errors.tsx';
import { BatchProgressPanel } from '../components/batches/batch-progress.tsx';
import { BatchStatusLive } from '../components/batches/batch-status-badge.tsx';
import { BatchTimeline } from '../components/batches/batch-timeline.tsx';
import { CancelBatchButton } from '../components/batches/cancel-batch-button.tsx';
import { DownloadButton } from '../components/download-button.tsx';
import { buttonStyles } from '../components/ui/button.tsx';
import { Card } from '../components/ui/card.tsx';
import { CopyableId } from '../components/ui/copy-button.tsx';
import { PageHeader } from '../components/ui/page-header.tsx';
import { EmptyState, LoadingState, RecordError } from '../components/ui/states.tsx';
import { batchFileName } from '../lib/bulk-batch.ts';

const backLink = (
  <Link to="/batches" className={buttonStyles({ variant: 'ghost', size: 'sm' })}>
    ← Batch list
  </Link>
);

/** One Batch API batch, polled until it has ended: where it stands, its files, and its jobs. */
export function BatchDetailPage() {
  const { id = '' } = useParams();
  const batch = useBatch(id);
  const { data: principal } = useMe();

  if (batch.isPending)
    return (
      <>
        <PageHeader title="Batch" actions={backLink} />
        <LoadingState label="Loading batch…" />
      </>
    );
  if (batch.isError && !batch.data)
    return (
      <>
        <PageHeader title="Batch" actions={backLink} />
        <RecordError
          error={batch.error}
          onRetry={() => void batch.refetch()}
          notFound={<EmptyState title="Batch not found">No batch with id {id} is visible to this API key.</EmptyState>}
        />
      </>
    );
  return <BatchDetail batch={batch.data} canWrite={hasScope(principal, 'jobs:write')} />;
}

function BatchDetail({ batch, canWrite }: { batch: BulkBatch; canWrite: boolean }) {
  const ended = isBatchEnded(batch.status);
  // Cancelling has been asked already; asking again changes nothing.
  const canCancel = canWrite && !ended && batch.status !== 'cancelling';
  // A batch refused at validation never submitted a job: no list to link to.
  const hasJobs = !(ended && batch.in_progress_at === null);
  const metadata = Object.entries(batch.metadata ?? {});
  const fileErrors = batch.errors?.data ?? [];
  return (
    <>
      <PageHeader title="Batch" description={<CopyableId id={batch.id} label="Copy batch id" />} actions={backLink} />
      <div className="grid gap-4 lg:grid-cols-3">
        <Card title="Summary">
          <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-2 text-sm">
            <dt className="text-slate-500">Status</dt>
            <dd>
              <BatchStatusLive status={batch.status} />
            </dd>
            <dt className="text-slate-500">Endpoint</dt>
            <dd className="font-mono">{batch.endpoint}</dd>
            <dt className="text-slate-500">Input file</dt>
            <dd className="font-mono break-all">{batch.input_file_id}</dd>
            <dt className="text-slate-500">Window</dt>
            <dd>{batch.completion_window}</dd>
            {metadata.map(([key, value]) => (
              <div key={key} className="contents">
                <dt className="font-mono text-slate-500">{key}</dt>
                <dd className="break-all">{value}</dd>
              </div>
            ))}
          </dl>
          <div className="mt-4 flex flex-wrap items-center gap-2">
            {batch.output_file_id && (
              <DownloadButton
                fetchBlob={() => downloadFile(batch.output_file_id!)}
                filename={batchFileName(batch.id, 'output')}
                label="Download output"
                text="Download output"
              />
            )}
            {batch.error_file_id && (
              <DownloadButton
                fetchBlob={() => downloadFile(batch.error_file_id!)}
                filename={batchFileName(batch.id, 'errors')}
                label="Download errors"
                text="Download errors"
              />
            )}
            {hasJobs && (
              <Link to={`/jobs?batch=${batch.id}`} className={buttonStyles({ variant: 'ghost', size: 'sm' })}>
                Jobs of this batch
              </Link>
            )}
          </div>
          {canCancel && (
            <div className="mt-4">
              <CancelBatchButton batchId={batch.id} />
            </div>
          )}
        </Card>
        <Card title="Progress" className="lg:col-span-2">
          <BatchProgressPanel batch={batch} />
        </Card>
        <Card title="Timeline" className="lg:col-span-3">
          <BatchTimeline batch={batch} />
        </Card>
      </div>
      {fileErrors.length > 0 && (
        <div className="mt-4">
          <BatchFileErrors errors={fileErrors} />
        </div>
      )}
    </>
  );
}
