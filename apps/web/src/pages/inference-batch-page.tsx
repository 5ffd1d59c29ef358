import { Link, useParams } from 'react-router';
import { isInferqError } from '@inferq/sdk';
import { useInferenceBatch } from '../api/queries/inference-batches.ts';
import { useMe } from '../api/queries/me.ts';
import { InferenceBatchJobsTable } from '../components/inference-batches/inference-batch-jobs-table.tsx';
import { InferenceBatchProvenance } from '../components/inference-batches/inference-batch-provenance.tsx';
import { buttonStyles } from '../components/ui/button.tsx';
import { Card } from '../components/ui/card.tsx';
import { PageHeader } from '../components/ui/page-header.tsx';
import { EmptyState, LoadingState, RecordError } from '../components/ui/states.tsx';

const backLink = (
  <Link to="/jobs" className={buttonStyles({ variant: 'ghost', size: 'sm' })}>
    ← Job list
  </Link>
);

// An inference batch holds jobs of many keys, so the API shows it to admin keys only.
const adminsOnly = (
  <EmptyState title="Admins only">
    An inference batch can hold other API keys’ jobs, so only an admin key can open it. A job’s own page shows where it ran.
  </EmptyState>
);

/** Where one inference batch (a worker's session run) ran, and its jobs: linked from a job's Provenance block. */
export function InferenceBatchPage() {
  const { id = '' } = useParams();
  const { data: principal, isPending: principalPending } = useMe();
  const isAdmin = principal?.admin === true;
  const batch = useInferenceBatch(id, isAdmin);
  const header = <PageHeader title="Inference batch" description={<span className="font-mono break-all">{id}</span>} actions={backLink} />;

  if (principalPending)
    return (
      <>
        {header}
        <LoadingState label="Loading inference batch…" />
      </>
    );
  if (!isAdmin)
    return (
      <>
        {header}
        {adminsOnly}
      </>
    );
  if (batch.isPending)
    return (
      <>
        {header}
        <LoadingState label="Loading inference batch…" />
      </>
    );
  if (batch.isError)
    return (
      <>
        {header}
        {isInferqError(batch.error) && batch.error.status === 403 ? (
          adminsOnly
        ) : (
          <RecordError
            error={batch.error}
            onRetry={() => void batch.refetch()}
            notFound={<EmptyState title="Inference batch not found">No inference batch with id {id}.</EmptyState>}
          />
        )}
      </>
    );
  return (
    <>
      {header}
      <div className="space-y-4">
        <Card title="Provenance">
          <InferenceBatchProvenance batch={batch.data} />
        </Card>
        <section aria-labelledby="batch-jobs-heading" className="space-y-3">
          <h2 id="batch-jobs-heading" className="text-lg font-semibold">
            Jobs
          </h2>
          <InferenceBatchJobsTable batch={batch.data} />
        </section>
      </div>
    </>
  );
}
