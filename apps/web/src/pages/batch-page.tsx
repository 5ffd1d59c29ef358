import { Link, useParams } from 'react-router';
import { isInferqError } from '@inferq/sdk';
import { useBatch } from '../api/queries/batches.ts';
import { useMe } from '../api/queries/me.ts';
import { BatchJobsTable } from '../components/batches/batch-jobs-table.tsx';
import { BatchProvenance } from '../components/batches/batch-provenance.tsx';
import { buttonStyles } from '../components/ui/button.tsx';
import { Card } from '../components/ui/card.tsx';
import { PageHeader } from '../components/ui/page-header.tsx';
import { EmptyState, ErrorAlert, LoadingState } from '../components/ui/states.tsx';

const backLink = (
  <Link to="/jobs" className={buttonStyles({ variant: 'ghost', size: 'sm' })}>
    ← Job list
  </Link>
);

// A batch holds jobs of many keys, so the API shows it to admin keys only.
const adminsOnly = (
  <EmptyState title="Admins only">A batch can hold other API keys’ jobs, so only an admin key can open it. A job’s own page shows where it ran.</EmptyState>
);

export function BatchPage() {
  const { id = '' } = useParams();
  const { data: principal, isPending: principalPending } = useMe();
  const isAdmin = principal?.admin === true;
  const batch = useBatch(id, isAdmin);
  const header = <PageHeader title="Batch" description={<span className="font-mono break-all">{id}</span>} actions={backLink} />;

  if (principalPending)
    return (
      <>
        {header}
        <LoadingState label="Loading batch…" />
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
        <LoadingState label="Loading batch…" />
      </>
    );
  if (batch.isError) {
    const notFound = isInferqError(batch.error) && (batch.error.status === 404 || batch.error.status === 400);
    const forbidden = isInferqError(batch.error) && batch.error.status === 403;
    return (
      <>
        {header}
        {forbidden ? (
          adminsOnly
        ) : notFound ? (
          <EmptyState title="Batch not found">No batch with id {id}.</EmptyState>
        ) : (
          <ErrorAlert error={batch.error} onRetry={() => void batch.refetch()} />
        )}
      </>
    );
  }
  return (
    <>
      {header}
      <div className="space-y-4">
        <Card title="Provenance">
          <BatchProvenance batch={batch.data} />
        </Card>
        <section aria-labelledby="batch-jobs-heading" className="space-y-3">
          <h2 id="batch-jobs-heading" className="text-lg font-semibold">
            Jobs
          </h2>
          <BatchJobsTable batch={batch.data} />
        </section>
      </div>
    </>
  );
}
