import { Link } from 'react-router';
import { useJob } from '../../api/queries/jobs.ts';
import { formatMs, shortId } from '../../lib/format.ts';
import { JobStatusLive } from '../job-status-badge.tsx';
import { JobOutputs } from '../jobs/job-tensors.tsx';
import { Card } from '../ui/card.tsx';
import { ErrorAlert, LoadingState } from '../ui/states.tsx';

/** The job just submitted: its status as it changes, then its result or error. */
export function JobWatch({ id }: { id: string }) {
  const job = useJob(id);
  return (
    <Card
      title="Result"
      actions={
        <Link to={`/jobs/${id}`} className="text-sm font-medium text-brand hover:underline">
          Open job {shortId(id)}
        </Link>
      }
    >
      {job.isPending && <LoadingState label="Waiting for the job…" />}
      {job.isError && !job.data && <ErrorAlert error={job.error} />}
      {job.data && (
        <div className="space-y-4">
          <dl className="flex flex-wrap gap-x-6 gap-y-2 text-sm">
            <div>
              <dt className="text-xs text-slate-500">Status</dt>
              <dd>
                <JobStatusLive status={job.data.status} />
              </dd>
            </div>
            <div>
              <dt className="text-xs text-slate-500">Queue wait</dt>
              <dd className="tabular-nums">{formatMs(job.data.queueMs)}</dd>
            </div>
            <div>
              <dt className="text-xs text-slate-500">Inference</dt>
              <dd className="tabular-nums">{formatMs(job.data.inferMs)}</dd>
            </div>
            <div>
              <dt className="text-xs text-slate-500">Batch size</dt>
              <dd className="tabular-nums">{job.data.batchSize ?? '—'}</dd>
            </div>
          </dl>
          {job.data.error && (
            <div role="alert" className="rounded-md bg-tone-danger/5 p-3 text-sm">
              <p className="font-medium text-tone-danger">{job.data.error.message}</p>
              <p className="font-mono text-xs text-slate-500">{job.data.error.code}</p>
            </div>
          )}
          {job.data.status === 'succeeded' && <JobOutputs job={job.data} />}
        </div>
      )}
    </Card>
  );
}
