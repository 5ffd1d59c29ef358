import type { BulkBatch } from '@inferq/sdk';
import { batchTimeline, unixToIso } from '../../lib/bulk-batch.ts';
import { RelativeTime } from '../ui/relative-time.tsx';

/** When the batch was created, began running, finalized and ended, and (while it runs) when it expires. */
export function BatchTimeline({ batch }: { batch: BulkBatch }) {
  return (
    <dl aria-label="Batch timeline" className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-2 text-sm">
      {batchTimeline(batch).map(([label, at]) => (
        <div key={label} className="contents">
          <dt className="text-slate-500">{label}</dt>
          <dd>
            <RelativeTime iso={unixToIso(at)} />
          </dd>
        </div>
      ))}
    </dl>
  );
}
