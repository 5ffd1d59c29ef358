import { Link, useParams } from 'react-router';
import type { Job } from '@inferq/contracts';
import { isInferqError } from '@inferq/sdk';
import { useJob } from '../api/queries/jobs.ts';
import { useMe } from '../api/queries/me.ts';
import { hasScope } from '../auth/permissions.ts';
import { JobStatusLive } from '../components/job-status-badge.tsx';
import { JobActions } from '../components/jobs/job-actions.tsx';
import { JobProvenance } from '../components/jobs/job-provenance.tsx';
import { JobInputs, JobOutputs } from '../components/jobs/job-tensors.tsx';
import { PurgedJob } from '../components/jobs/purged-job.tsx';
import { JobTimeline } from '../components/jobs/job-timeline.tsx';
import { buttonStyles } from '../components/ui/button.tsx';
import { Card } from '../components/ui/card.tsx';
import { CopyableId } from '../components/ui/copy-button.tsx';
import { PageHeader } from '../components/ui/page-header.tsx';
import { EmptyState, LoadingState, RecordError } from '../components/ui/states.tsx';
import { formatDateTime } from '../lib/format.ts';

const backLink = (
  <Link to="/jobs" className={buttonStyles({ variant: 'ghost', size: 'sm' })}>
    ← Job list
  </Link>
);

export function JobDetailPage() {
  const { id = '' } = useParams();
  const job = useJob(id);
  const { data: principal } = useMe();

  if (job.isPending)
    return (
      <>
        <PageHeader title="Job details" actions={backLink} />
        <LoadingState label="Loading job…" />
      </>
    );
  if (job.isError && isInferqError(job.error, 'JOB_PURGED')) {
    return (
      <>
        <PageHeader title="Job details" description={<span className="font-mono break-all">{id}</span>} actions={backLink} />
        <PurgedJob problem={job.error.problem} />
      </>
    );
  }
  if (job.isError && !job.data)
    return (
      <>
        <PageHeader title="Job details" actions={backLink} />
        <RecordError
          error={job.error}
          onRetry={() => void job.refetch()}
          notFound={<EmptyState title="Job not found">No job with id {id} is visible to this API key.</EmptyState>}
        />
      </>
    );
  return <JobDetail job={job.data} canWrite={hasScope(principal, 'jobs:write')} isAdmin={principal?.admin === true} />;
}

function JobDetail({ job, canWrite, isAdmin }: { job: Job; canWrite: boolean; isAdmin: boolean }) {
  const metadata = Object.entries(job.metadata);
  return (
    <>
      <PageHeader title="Job details" description={<CopyableId id={job.id} label="Copy job id" />} actions={backLink} />
      <div className="grid gap-4 lg:grid-cols-3">
        <Card title="Summary">
          <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-2 text-sm">
            <dt className="text-slate-500">Status</dt>
            <dd>
              <JobStatusLive status={job.status} />
            </dd>
            <dt className="text-slate-500">Model</dt>
            <dd className="font-mono">
              {job.model}:{job.modelVersion}
            </dd>
            <dt className="text-slate-500">Priority</dt>
            <dd>{job.priority}</dd>
            {metadata.map(([key, value]) => (
              <div key={key} className="contents">
                <dt className="font-mono text-slate-500">{key}</dt>
                <dd className="break-all">{value}</dd>
              </div>
            ))}
          </dl>
          {canWrite && (
            <div className="mt-4">
              <JobActions job={job} />
            </div>
          )}
        </Card>
        <Card title="Timings" className="lg:col-span-2">
          <JobTimeline job={job} />
        </Card>
        <Card title="Provenance" className="lg:col-span-3">
          <JobProvenance job={job} canOpenBatch={isAdmin} />
        </Card>
      </div>
      {job.error && (
        <div role="alert" className="mt-4 rounded-lg border border-tone-danger/30 bg-tone-danger/5 p-4 text-sm">
          <h2 className="font-semibold text-tone-danger">The job failed</h2>
          <p className="mt-1 text-slate-800">{job.error.message}</p>
          <p className="mt-1 font-mono text-xs text-slate-500">{job.error.code}</p>
        </div>
      )}
      <div className="mt-4 space-y-4">
        <Card title="Outputs">
          <JobOutputs job={job} />
        </Card>
        <Card title="Inputs">
          {job.inputsDroppedAt ? (
            <p className="text-sm text-slate-600">
              Dropped on {formatDateTime(job.inputsDroppedAt)} after the server's input retention (submit with keepInputs to keep them).
            </p>
          ) : (
            <JobInputs job={job} />
          )}
        </Card>
      </div>
    </>
  );
}
