import type { ReactNode } from 'react';
import { Link } from 'react-router';
import type { Batch } from '@inferq/contracts';
import { formatDateTime, formatMs, shortSha256 } from '../../lib/format.ts';

const Item = ({ label, children }: { label: string; children: ReactNode }) => (
  <div>
    <dt className="text-xs text-slate-500">{label}</dt>
    <dd className="font-medium break-all">{children}</dd>
  </div>
);

/** What ran the inference batch: the model artifact, where, and how big and long the run was. */
export function InferenceBatchProvenance({ batch }: { batch: Batch }) {
  return (
    <dl aria-label="Batch provenance" className="grid grid-cols-2 gap-3 text-sm sm:grid-cols-3 lg:grid-cols-5">
      <Item label="Model">
        <Link to={`/models/${encodeURIComponent(batch.model)}`} className="font-mono text-brand underline-offset-2 hover:underline">
          {batch.model}:{batch.modelVersion}
        </Link>
      </Item>
      <Item label="Model sha256">
        <span className="font-mono" title={batch.modelSha256}>
          {shortSha256(batch.modelSha256)}
        </span>
      </Item>
      <Item label="Worker">
        <span className="font-mono">{batch.workerId}</span>
      </Item>
      <Item label="Device">
        <span className="font-mono">{batch.device}</span>
      </Item>
      <Item label="Provider">
        <span className="font-mono">{batch.provider}</span>
      </Item>
      <Item label="Jobs">
        <span className="tabular-nums">{batch.size}</span>
      </Item>
      <Item label="Items">
        <span className="tabular-nums">{batch.items}</span>
      </Item>
      <Item label="Inference time">
        <span className="tabular-nums">{formatMs(batch.inferMs)}</span>
      </Item>
      <Item label="Started">
        <time dateTime={batch.startedAt}>{formatDateTime(batch.startedAt)}</time>
      </Item>
    </dl>
  );
}
