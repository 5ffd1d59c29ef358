import { useParams } from 'react-router';
import type { Job } from '@inferq/contracts';
import { isInferqError } from '@inferq/sdk';
import { useJob } from '../api/queries/jobs.ts';
import { useMe } from '../api/queries/me.ts';
import { hasScope } from '../auth/permissions.ts';
import { DetailPage } from '../components/detail/detail-page.tsx';
import { SummaryCard, SummaryField } from '../components/detail/summary-card.tsx';
import { JobStatusLive } from '../components/job-status-badge.tsx';
import { JobActions } from '../components/jobs/job-actions.tsx';
import { JobProvenance } from '../components/jobs/job-provenance.tsx';
import { JobInputs, JobOutputs } from '../components/jobs/job-tensors.tsx';
import { PurgedJob } from '../components/jobs/purged-job.tsx';
import { JobTimeline } from '../components/jobs/job-timeline.tsx';
import { Card } from '../components/ui/card.tsx';
import { formatDateTime } from '../lib/format.ts';

/** One job, polled until it is terminal; a purged job's page says when and why instead. */
export function JobDetailPage() {
  const { id = '' } = useParams();
  const job = useJob(id);
  const { data: principal } = useMe();
  return (
    <DetailPage
      title="Job details"
      noun="job"
      id={id}
      list={{ to: '/jobs', label: 'Job list' }}
      record={job}
      explainError={(error) => (isInferqError(error, 'JOB_PURGED') ? <PurgedJob problem={error.problem} /> : undefined)}
    >
      {(loaded) => <JobDetail job={loaded} canWrite={hasScope(principal, 'jobs:write')} isAdmin={principal?.admin === true} />}
    </DetailPage>
  );
}

function JobDetail({ job, canWrite, isAdmin }: { job: Job; canWrite: boolean; isAdmin: boolean }) {
  return (
    <>
      <div className="grid gap-4 lg:grid-cols-3">
        <SummaryCard
          status={<JobStatusLive status={job.status} />}
          metadata={job.metadata}
          footer={
            canWrite && (
              <div className="mt-4">
                <JobActions job={job} />
              </div>
            )
          }
        >
          <SummaryField label="Model" className="font-mono">
            {job.model}:{job.modelVersion}
          </SummaryField>
          <SummaryField label="Priority">{job.priority}</SummaryField>
        </SummaryCard>
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
