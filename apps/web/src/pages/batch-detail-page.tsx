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
import { DetailPage } from '../components/detail/detail-page.tsx';
import { SummaryCard, SummaryField } from '../components/detail/summary-card.tsx';
import { DownloadButton } from '../components/download-button.tsx';
import { buttonStyles } from '../components/ui/button.tsx';
import { Card } from '../components/ui/card.tsx';
import { batchFileName } from '../lib/bulk-batch.ts';

/** One Batch API batch, polled until it has ended: where it stands, its files, and its jobs. */
export function BatchDetailPage() {
  const { id = '' } = useParams();
  const batch = useBatch(id);
  const { data: principal } = useMe();
  return (
    <DetailPage title="Batch" noun="batch" id={id} list={{ to: '/batches', label: 'Batch list' }} record={batch}>
      {(loaded) => <BatchDetail batch={loaded} canWrite={hasScope(principal, 'jobs:write')} />}
    </DetailPage>
  );
}

function BatchDetail({ batch, canWrite }: { batch: BulkBatch; canWrite: boolean }) {
  const ended = isBatchEnded(batch.status);
  // Cancelling has been asked already; asking again changes nothing.
  const canCancel = canWrite && !ended && batch.status !== 'cancelling';
  // A batch refused at validation never submitted a job: no list to link to.
  const hasJobs = !(ended && batch.in_progress_at === null);
  const fileErrors = batch.errors?.data ?? [];
  return (
    <>
      <div className="grid gap-4 lg:grid-cols-3">
        <SummaryCard
          status={<BatchStatusLive status={batch.status} />}
          metadata={batch.metadata}
          footer={<BatchActions batch={batch} hasJobs={hasJobs} canCancel={canCancel} />}
        >
          <SummaryField label="Endpoint" className="font-mono">
            {batch.endpoint}
          </SummaryField>
          <SummaryField label="Input file" className="font-mono break-all">
            {batch.input_file_id}
          </SummaryField>
          <SummaryField label="Window">{batch.completion_window}</SummaryField>
        </SummaryCard>
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

/** The batch's files once they exist, its jobs once it has any, and cancelling while it runs. */
function BatchActions({ batch, hasJobs, canCancel }: { batch: BulkBatch; hasJobs: boolean; canCancel: boolean }) {
  return (
    <>
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
    </>
  );
}
