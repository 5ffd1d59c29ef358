import { useNavigate } from 'react-router';
import type { Job } from '@inferq/contracts';
import { useCancelJob, useRetryJob } from '../../api/mutations/jobs.ts';
import { Button } from '../ui/button.tsx';
import { ErrorAlert } from '../ui/states.tsx';
import { DeleteJobButton } from './delete-job-button.tsx';

const RESUBMITTABLE = new Set<Job['status']>(['failed', 'canceled', 'expired']);

/** Cancel while queued; re-submit once failed or stopped (as a new job, which the page then shows); delete unless running. */
export function JobActions({ job }: { job: Job }) {
  const navigate = useNavigate();
  const cancel = useCancelJob();
  const retry = useRetryJob();
  const canCancel = job.status === 'queued';
  const canRetry = RESUBMITTABLE.has(job.status);
  const canRetryInputs = canRetry && !job.inputsDroppedAt;

  return (
    <div className="space-y-3">
      <div className="flex flex-wrap gap-2">
        {canCancel && (
          <Button variant="danger" disabled={cancel.isPending} onClick={() => cancel.mutate(job.id)}>
            {cancel.isPending ? 'Canceling…' : 'Cancel job'}
          </Button>
        )}
        {canRetryInputs && (
          <Button
            variant="primary"
            disabled={retry.isPending}
            onClick={() => retry.mutate(job.id, { onSuccess: (accepted) => void navigate(`/jobs/${accepted.id}`) })}
          >
            {retry.isPending ? 'Re-submitting…' : 'Re-submit'}
          </Button>
        )}
      </div>
      <DeleteJobButton job={job} />
      {cancel.isError && <ErrorAlert error={cancel.error} />}
      {retry.isError && <ErrorAlert error={retry.error} />}
    </div>
  );
}
