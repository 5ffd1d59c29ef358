import type { Model } from '@inferq/contracts';
import { formatBatching, formatBytes, formatDateTime, formatEmbedding } from '../../lib/format.ts';
import { Badge } from '../ui/badge.tsx';
import { DataTable, type Column } from '../ui/data-table.tsx';
import { EmbeddingsBadge, ResponseCacheBadge } from './model-badges.tsx';
import { RetireVersionControl } from './retire-version-control.tsx';

const SHA_SHOWN_CHARS = 12;

const columns = (latestVersion: number, name: string, canRetire: boolean): ReadonlyArray<Column<Model>> => [
  {
    header: 'Version',
    cell: (m) => (
      <span className="inline-flex items-center gap-2 font-mono">
        v{m.version}
        {m.version === latestVersion && <Badge tone="neutral">latest</Badge>}
      </span>
    ),
  },
  {
    header: 'sha256',
    cell: (m) => (
      <span className="font-mono text-xs" title={m.sha256}>
        {m.sha256.slice(0, SHA_SHOWN_CHARS)}…
      </span>
    ),
  },
  { header: 'Size', cell: (m) => formatBytes(m.sizeBytes), className: 'text-right' },
  { header: 'Registered', cell: (m) => formatDateTime(m.createdAt) },
  {
    header: 'Status',
    cell: (m) =>
      m.retiredAt ? (
        <span className="inline-flex flex-wrap items-center gap-2" title="Takes no new jobs; its queued and running jobs finish">
          <Badge tone="muted">retired</Badge>
          <span className="text-xs">{formatDateTime(m.retiredAt)}</span>
        </span>
      ) : (
        <Badge tone="success">active</Badge>
      ),
  },
  { header: 'Batching', cell: (m) => formatBatching(m.signature.batchable, m.batching) },
  { header: 'Response cache', cell: (m) => <ResponseCacheBadge on={m.responseCache} /> },
  {
    header: 'Embeddings',
    cell: (m) =>
      m.embedding ? (
        <span className="inline-flex flex-wrap items-center gap-2">
          <EmbeddingsBadge />
          <span className="text-xs">{formatEmbedding(m.embedding)}</span>
        </span>
      ) : (
        '—'
      ),
  },
  ...(canRetire
    ? [{ header: 'Actions', cell: (m: Model) => <RetireVersionControl name={name} version={m.version} retired={m.retiredAt !== undefined} /> }]
    : []),
];

/**
 * Every registered version of one model, newest first; "latest" marks the one
 * a job naming the model alone runs on when there is no routing (the newest
 * not retired). `canRetire` (models:write) adds a Retire control per version.
 */
export function ModelVersionsTable({ versions, canRetire = false }: { versions: readonly Model[]; canRetire?: boolean }) {
  const active = versions.filter((m) => !m.retiredAt);
  const latestVersion = Math.max(0, ...active.map((m) => m.version));
  const name = versions[0]?.name ?? '';
  return <DataTable caption="Registered versions" columns={columns(latestVersion, name, canRetire)} rows={versions} rowKey={(m) => String(m.version)} />;
}
