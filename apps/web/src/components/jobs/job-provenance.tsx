import type { ReactNode } from 'react';
import { Link } from 'react-router';
import type { Job } from '@inferq/contracts';
import { formatMs, formatPercent, shortSha256 } from '../../lib/format.ts';

/** The provenance fields of a job (issue #9), optional here so the block also reads answers from an API without them. */
type JobProvenanceFields = Partial<{
  batchId: string | null;
  workerId: string | null;
  device: string | null;
  provider: string | null;
  modelSha256: string | null;
  items: number | null;
  deviceMs: number | null;
}>;

const Item = ({ label, children }: { label: string; children: ReactNode }) => (
  <div>
    <dt className="text-xs text-slate-500">{label}</dt>
    <dd className="font-medium break-all">{children}</dd>
  </div>
);

const mono = (value: string | null | undefined) => <span className="font-mono">{value ?? '—'}</span>;

/** The job's share of its batch's device time, and what fraction of the batch's run that is. */
function deviceShare(deviceMs: number | null | undefined, inferMs: number | null): string {
  if (deviceMs === null || deviceMs === undefined) return 'not charged';
  if (inferMs === null || inferMs <= 0) return formatMs(deviceMs);
  return `${formatMs(deviceMs)} · ${formatPercent(deviceMs / inferMs)} of the batch’s ${formatMs(inferMs)}`;
}

/** Which batch ran the job, on what worker, device and model artifact, and the device time charged to it. */
export function JobProvenance({ job, canOpenBatch }: { job: Job & JobProvenanceFields; canOpenBatch: boolean }) {
  if (!job.batchId) {
    const why = job.cacheHit
      ? 'Answered from the response cache: no batch ran and no device time was charged.'
      : job.finishedAt
        ? 'No batch recorded: the job ended before a worker ran it, or ran before batches were recorded.'
        : 'Not run yet: the batch, worker and device appear once a worker takes the job.';
    return <p className="text-sm text-slate-600">{why}</p>;
  }
  return (
    <dl aria-label="Provenance" className="grid grid-cols-2 gap-3 text-sm sm:grid-cols-4">
      <Item label="Batch">
        {canOpenBatch ? (
          <Link to={`/inference-batches/${job.batchId}`} className="font-mono text-brand underline-offset-2 hover:underline">
            {job.batchId}
          </Link>
        ) : (
          mono(job.batchId)
        )}
      </Item>
      <Item label="Worker">{mono(job.workerId)}</Item>
      <Item label="Device">{mono(job.device)}</Item>
      <Item label="Provider">{mono(job.provider)}</Item>
      <Item label="Model sha256">
        {job.modelSha256 ? (
          <span className="font-mono" title={job.modelSha256}>
            {shortSha256(job.modelSha256)}
          </span>
        ) : (
          '—'
        )}
      </Item>
      <Item label="Items">
        <span className="tabular-nums">{job.items ?? '—'}</span>
      </Item>
      <Item label="Device time">
        <span className="tabular-nums">{deviceShare(job.deviceMs, job.inferMs)}</span>
      </Item>
    </dl>
  );
}
