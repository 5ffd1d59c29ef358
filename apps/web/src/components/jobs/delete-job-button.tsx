import { useState } from 'react';
import type { Job } from '@inferq/contracts';
import { useDeleteJob } from '../../api/mutations/jobs.ts';
import { Button } from '../ui/button.tsx';
import { ErrorAlert } from '../ui/states.tsx';

/**
 * Deletes a job after a confirmation that says what goes: its inputs, outputs and metadata, for good. A running
 * job cannot be deleted (the API answers 409 JOB_RUNNING), so the button waits for it to finish.
 */
export function DeleteJobButton({ job }: { job: Pick<Job, 'id' | 'status'> }) {
  const remove = useDeleteJob();
  const [confirming, setConfirming] = useState(false);
  if (job.status === 'running') return null;
  return (
    <div className="space-y-3">
      {confirming ? (
        <div
          role="alertdialog"
          aria-labelledby="delete-job-question"
          className="space-y-2 rounded-lg border border-tone-danger/30 bg-tone-danger/5 p-3 text-sm"
        >
          <p id="delete-job-question">
            Delete this job? Its inputs, outputs and metadata are deleted for good{job.status === 'queued' ? ' (it is canceled first)' : ''}; only a tombstone
            with its times and accounting is kept.
          </p>
          <div className="flex flex-wrap gap-2">
            <Button variant="danger" disabled={remove.isPending} onClick={() => remove.mutate(job.id, { onSettled: () => setConfirming(false) })}>
              {remove.isPending ? 'Deleting…' : 'Delete for good'}
            </Button>
            <Button variant="ghost" disabled={remove.isPending} onClick={() => setConfirming(false)}>
              Keep it
            </Button>
          </div>
        </div>
      ) : (
        <Button variant="danger" onClick={() => setConfirming(true)}>
          Delete job
        </Button>
      )}
      {remove.isError && <ErrorAlert error={remove.error} />}
    </div>
  );
}
