import { Link } from 'react-router';
import type { JobTombstone, Problem } from '@inferq/contracts';
import { formatDateTime, formatMs, formatSpan } from '../../lib/format.ts';
import { Card } from '../ui/card.tsx';

/** Why, going on from "Its data was deleted on …: ". */
function whyPurged(problem: Problem, job: Partial<JobTombstone>) {
  if (problem.purgeReason === 'deleted')
    return 'it was deleted (DELETE /v1/jobs/:id, by its owner or an admin; the audit log records which key, as job:deleted).';
  const kept = job.finishedAt ? `, ${formatSpan(job.finishedAt, problem.purgedAt)} after it finished` : '';
  return (
    <>
      its retention period ran out{kept}
      {job.model && (
        <>
          {' '}
          (the retention of{' '}
          <Link to={`/models/${encodeURIComponent(job.model)}`} className="text-brand underline-offset-2 hover:underline">
            {job.model}
          </Link>{' '}
          if it sets one, else its key&apos;s, else the server&apos;s).
        </>
      )}
    </>
  );
}

/** A purged job (410 JOB_PURGED): when and why, and what the tombstone kept. */
export function PurgedJob({ problem }: { problem: Problem }) {
  const job: Partial<JobTombstone> = problem.job ?? {};
  const rows: Array<[string, string]> = [
    ['Status', job.status ?? '—'],
    ['Model', job.model ? `${job.model}:${job.modelVersion}` : '—'],
    ['Priority', job.priority ?? '—'],
    ['Created', formatDateTime(job.createdAt)],
    ['Finished', formatDateTime(job.finishedAt)],
    ['Purged', `${formatDateTime(problem.purgedAt)} (${problem.purgeReason === 'deleted' ? 'deleted' : 'retention ran out'})`],
    ...(job.inputsDroppedAt ? [['Inputs dropped', `${formatDateTime(job.inputsDroppedAt)} (input retention, before the purge)`] as [string, string]] : []),
    ['Queue wait', formatMs(job.queueMs)],
    ['Inference', formatMs(job.inferMs)],
    ['Device time', formatMs(job.deviceMs)],
    ['Error code', job.error?.code ?? '—'],
  ];
  return (
    <div className="space-y-4">
      <div role="status" className="rounded-lg border border-slate-300 bg-slate-50 p-4 text-sm">
        <h2 className="font-semibold">This job was purged</h2>
        <p className="mt-1 text-slate-700">
          Its data was deleted on {formatDateTime(problem.purgedAt)}: {whyPurged(problem, job)}
        </p>
        <p className="mt-1 text-slate-700">
          Its {job.inputsDroppedAt ? 'outputs' : 'inputs, outputs'}, metadata and webhook are gone
          {job.inputsDroppedAt && <> (its inputs had been dropped on {formatDateTime(job.inputsDroppedAt)})</>}; what is below was kept, and usage still counts
          it.
        </p>
      </div>
      <Card title="What was kept">
        <dl aria-label="What was kept" className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-2 text-sm">
          {rows.map(([label, value]) => (
            <div key={label} className="contents">
              <dt className="text-slate-500">{label}</dt>
              <dd>{value}</dd>
            </div>
          ))}
        </dl>
      </Card>
    </div>
  );
}
