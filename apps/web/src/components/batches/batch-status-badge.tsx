import type { BulkBatchStatus } from '@inferq/sdk';
import { Badge, type Tone } from '../ui/badge.tsx';

const STATUS_TONE: Record<BulkBatchStatus, Tone> = {
  validating: 'info',
  in_progress: 'progress',
  finalizing: 'progress',
  cancelling: 'progress',
  completed: 'success',
  failed: 'danger',
  expired: 'muted',
  cancelled: 'muted',
};

/** Still moving: the dot pulses, as a running job's does. */
const MOVING = new Set<BulkBatchStatus>(['in_progress', 'finalizing', 'cancelling']);

export function BatchStatusBadge({ status }: { status: BulkBatchStatus }) {
  return (
    <Badge tone={STATUS_TONE[status]}>
      <span aria-hidden="true" className={`size-1.5 rounded-full bg-current ${MOVING.has(status) ? 'animate-pulse' : ''}`} />
      {status}
    </Badge>
  );
}

/** The live status of the batch a page is about: the one role=status element, announced as it changes. */
export function BatchStatusLive({ status }: { status: BulkBatchStatus }) {
  return (
    <span role="status" aria-label="Batch status" aria-live="polite">
      <BatchStatusBadge status={status} />
    </span>
  );
}
