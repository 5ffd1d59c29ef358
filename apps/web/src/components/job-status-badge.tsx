import type { JobStatus } from '@inferq/contracts';
import { Badge, type Tone } from './ui/badge.tsx';

const STATUS_TONE: Record<JobStatus, Tone> = {
  queued: 'info',
  running: 'progress',
  succeeded: 'success',
  failed: 'danger',
  canceled: 'muted',
  expired: 'muted',
};

export function JobStatusBadge({ status }: { status: JobStatus }) {
  return (
    <Badge tone={STATUS_TONE[status]}>
      <span aria-hidden="true" className={`size-1.5 rounded-full bg-current ${status === 'running' ? 'animate-pulse' : ''}`} />
      {status}
    </Badge>
  );
}

/** The live status of the job a page is about: the one role=status element, announced as it changes. */
export function JobStatusLive({ status }: { status: JobStatus }) {
  return (
    <span role="status" aria-label="Job status" aria-live="polite">
      <JobStatusBadge status={status} />
    </span>
  );
}
