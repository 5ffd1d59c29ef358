import { useJobRun } from '../../api/queries/jobs.ts';
import type { SubmitManyRun } from '../../hooks/use-submit-many.ts';
import { summarizeRun } from '../../lib/run-summary.ts';
import { Card } from '../ui/card.tsx';
import { ErrorAlert } from '../ui/states.tsx';

const Bar = ({ label, value, max }: { label: string; value: number; max: number }) => (
  <div>
    <div className="flex justify-between text-sm">
      <span>{label}</span>
      <span className="tabular-nums">
        {value} / {max}
      </span>
    </div>
    <progress
      aria-label={label}
      value={value}
      max={max}
      className={[
        'mt-1 h-2 w-full overflow-hidden rounded-full',
        '[&::-moz-progress-bar]:bg-brand [&::-webkit-progress-bar]:bg-slate-200 [&::-webkit-progress-value]:bg-brand',
      ].join(' ')}
    />
  </div>
);

/** Progress of a "Submit 100" run: submits, then completions and the batch sizes the jobs ran in. */
export function SubmitManyPanel({ run }: { run: SubmitManyRun }) {
  const jobs = useJobRun(run.modelName, run.jobIds);
  const summary = summarizeRun(jobs.data ?? []);
  const counts = Object.entries(summary.byStatus).filter(([, n]) => n > 0);
  return (
    <Card title={`${run.total} jobs`}>
      <div className="space-y-4" aria-live="polite">
        <Bar label="Submitted" value={run.accepted + run.rejected} max={run.total} />
        {!run.submitting && run.jobIds.length > 0 && <Bar label="Finished" value={summary.finished} max={run.jobIds.length} />}
        {run.rejected > 0 && <p className="text-sm text-tone-danger">{run.rejected} submits were rejected.</p>}
        {counts.length > 0 && <p className="text-sm text-slate-700">{counts.map(([status, n]) => `${n} ${status}`).join(' · ')}</p>}
        {summary.batchSizes.length > 0 && (
          <table className="text-sm">
            <caption className="mb-1 text-left font-medium">Batch sizes they ran in</caption>
            <thead>
              <tr className="text-left text-xs text-slate-500 uppercase">
                <th scope="col" className="pr-6">
                  Batch size
                </th>
                <th scope="col">Jobs</th>
              </tr>
            </thead>
            <tbody>
              {summary.batchSizes.map(([size, n]) => (
                <tr key={size}>
                  <td className="pr-6 tabular-nums">{size}</td>
                  <td className="tabular-nums">{n}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
      {run.firstError !== undefined && (
        <div className="mt-4">
          <ErrorAlert error={run.firstError} />
        </div>
      )}
      {jobs.isError && (
        <div className="mt-4">
          <ErrorAlert error={jobs.error} />
        </div>
      )}
    </Card>
  );
}
