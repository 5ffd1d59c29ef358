import type { ReactNode } from 'react';
import { batchProgress, isBatchEnded, type BatchProgress, type BulkBatch } from '@inferq/sdk';
import { useNow } from '../../hooks/use-now.ts';
import { batchEndedAt } from '../../lib/bulk-batch.ts';
import { formatMs, formatNumber, formatPercent } from '../../lib/format.ts';
import { Meter } from '../ui/meter.tsx';

const NOT_KNOWN = 'not known yet';

const Figure = ({ label, children }: { label: string; children: ReactNode }) => (
  <div>
    <dt className="text-xs text-slate-500">{label}</dt>
    <dd className="font-medium tabular-nums">{children}</dd>
  </div>
);

const formatRequestRate = (perS: number | undefined): string => (perS === undefined ? NOT_KNOWN : `${formatNumber(perS, perS < 10 ? 2 : 0)} requests/s`);

function formatTimeLeft(progress: BatchProgress, ended: boolean): string {
  if (ended) return '—';
  if (progress.etaS === undefined) return NOT_KNOWN;
  return progress.etaS < 1 ? 'under a second' : formatMs(progress.etaS * 1000);
}

/**
 * How far the batch has got: a bar, the request counts, the rate since it began running and the time left at that
 * rate. Once ended the rate is measured to its end, so it stays the batch's own rather than falling as time passes.
 */
export function BatchProgressPanel({ batch }: { batch: BulkBatch }) {
  const now = useNow();
  const ended = isBatchEnded(batch.status);
  const endedAt = batchEndedAt(batch);
  const progress = batchProgress(batch, undefined, ended && endedAt !== null ? endedAt * 1000 : now);
  const { total, completed, failed } = batch.request_counts;
  const share = total > 0 ? progress.done / total : 0;
  return (
    <div className="space-y-4">
      <Meter label="Batch progress" value={progress.done} max={total} text={`${progress.done} of ${total} (${formatPercent(share)})`} />
      <dl aria-label="Request counts" className="grid grid-cols-2 gap-3 text-sm sm:grid-cols-3 lg:grid-cols-6">
        <Figure label="Total">{total}</Figure>
        <Figure label="Completed">{completed}</Figure>
        <Figure label="Failed">{failed}</Figure>
        <Figure label="Remaining">{Math.max(0, total - progress.done)}</Figure>
        <Figure label="Rate">{formatRequestRate(progress.perS)}</Figure>
        <Figure label="Time left">{formatTimeLeft(progress, ended)}</Figure>
      </dl>
    </div>
  );
}
