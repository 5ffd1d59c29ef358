import type { ReactNode } from 'react';
import type { AdaptiveBatching, WorkerStatus } from '@inferq/contracts';
import { formatItemsPerS, formatMs } from '../../lib/format.ts';
import { Card } from '../ui/card.tsx';
import { DataTable, type Column } from '../ui/data-table.tsx';
import { ThroughputCurveChart } from './throughput-curve-chart.tsx';

type ProfilePoint = AdaptiveBatching['curve'][number];

const CURVE_COLUMNS: ReadonlyArray<Column<ProfilePoint>> = [
  { header: 'Items', cell: (p) => p.items, className: 'text-right tabular-nums' },
  { header: 'Inference', cell: (p) => formatMs(p.inferMs), className: 'text-right tabular-nums' },
  { header: '± deviation', cell: (p) => `± ${formatMs(p.deviationMs)}`, className: 'text-right tabular-nums' },
  { header: 'Samples', cell: (p) => p.samples.toLocaleString(), className: 'text-right tabular-nums' },
];

const Fact = ({ label, children }: { label: string; children: ReactNode }) => (
  <div>
    <dt className="text-xs text-slate-500">{label}</dt>
    <dd className="text-sm text-slate-900">{children}</dd>
  </div>
);

/** What one worker measured for an `auto` model on its device, and the batch size and delay it chose from that. */
export function AdaptiveBatchingCard({ worker, adaptive }: { worker: WorkerStatus; adaptive: AdaptiveBatching }) {
  const curve = [...adaptive.curve].sort((a, b) => a.items - b.items);
  return (
    <Card
      headingLevel="h3"
      title={
        <>
          <span className="font-mono">{worker.workerId}</span> · {worker.device}
        </>
      }
    >
      <dl className="grid grid-cols-2 gap-3 sm:grid-cols-4">
        <Fact label="Chosen">
          {adaptive.maxBatchSize} jobs, waits {formatMs(adaptive.maxBatchDelayMs)}
        </Fact>
        <Fact label="Expected throughput">{formatItemsPerS(adaptive.itemsPerS)}</Fact>
        <Fact label="Latency target">p99 ≤ {formatMs(adaptive.latencyTargetMs)}</Fact>
        <Fact label="Why">{adaptive.reason}</Fact>
      </dl>
      <div className="mt-4 space-y-3">
        <ThroughputCurveChart curve={curve} chosenItems={adaptive.maxBatchSize} />
        {curve.length > 0 && (
          <DataTable
            caption={`Inference time per batch size of ${adaptive.model} on ${worker.workerId}`}
            columns={CURVE_COLUMNS}
            rows={curve}
            rowKey={(p) => String(p.items)}
          />
        )}
      </div>
    </Card>
  );
}
