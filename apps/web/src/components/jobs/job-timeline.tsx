import type { Job } from '@inferq/contracts';
import { formatDateTime, formatMs } from '../../lib/format.ts';

const Step = ({ label, iso }: { label: string; iso: string | null }) => (
  <li className="flex-1">
    <p className={`text-xs font-semibold tracking-wide uppercase ${iso ? 'text-brand' : 'text-slate-400'}`}>{label}</p>
    <p className="text-sm text-slate-800">{iso ? <time dateTime={iso}>{formatDateTime(iso)}</time> : 'not yet'}</p>
  </li>
);

const Duration = ({ label, value }: { label: string; value: string }) => (
  <div>
    <dt className="text-xs text-slate-500">{label}</dt>
    <dd className="font-medium tabular-nums">{value}</dd>
  </div>
);

/** Queued → started → finished, with the queue wait, inference time and batch the job ran in. */
export function JobTimeline({ job }: { job: Job }) {
  return (
    <div className="space-y-4">
      <ol aria-label="Timeline" className="flex flex-col gap-3 border-l-2 border-slate-200 pl-3 sm:flex-row sm:border-t-2 sm:border-l-0 sm:pt-3 sm:pl-0">
        <Step label="Queued" iso={job.createdAt} />
        <Step label="Started" iso={job.startedAt} />
        <Step label="Finished" iso={job.finishedAt} />
      </ol>
      <dl className="grid grid-cols-2 gap-3 text-sm sm:grid-cols-4">
        <Duration label="Queue wait" value={formatMs(job.queueMs)} />
        <Duration label="Inference time" value={formatMs(job.inferMs)} />
        <Duration label="Batch size" value={job.batchSize === null ? '—' : String(job.batchSize)} />
        <Duration label="Attempts" value={String(job.attempts)} />
      </dl>
    </div>
  );
}
