import type { Model } from '@inferq/contracts';
import { formatBatching, formatBytes, formatDateTime, formatEmbedding } from '../../lib/format.ts';
import { Badge } from '../ui/badge.tsx';
import { DataTable, type Column } from '../ui/data-table.tsx';
import { EmbeddingsBadge, ResponseCacheBadge } from './model-badges.tsx';

const SHA_SHOWN_CHARS = 12;

const columns = (latestVersion: number): ReadonlyArray<Column<Model>> => [
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
];

/** Every registered version of one model, newest first. */
export function ModelVersionsTable({ versions }: { versions: readonly Model[] }) {
  const latestVersion = Math.max(...versions.map((m) => m.version));
  return <DataTable caption="Registered versions" columns={columns(latestVersion)} rows={versions} rowKey={(m) => String(m.version)} />;
}
