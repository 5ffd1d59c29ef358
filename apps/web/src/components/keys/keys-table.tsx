import type { ApiKey } from '@inferq/contracts';
import { useRevokeKey } from '../../api/mutations/keys.ts';
import { Badge } from '../ui/badge.tsx';
import { Button } from '../ui/button.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { RelativeTime } from '../ui/relative-time.tsx';
import { ErrorAlert } from '../ui/states.tsx';
import { KeyRetention } from './key-retention.tsx';

/** Every key with its scopes, limits, job retention and state; active keys other than the caller's own can be revoked. */
export function KeysTable({ keys, currentKeyId }: { keys: readonly ApiKey[]; currentKeyId: string | undefined }) {
  const revoke = useRevokeKey();
  return (
    <div className="space-y-3">
      {revoke.isError && <ErrorAlert error={revoke.error} />}
      <DataTable
        caption="API keys"
        rows={keys}
        rowKey={(k) => k.id}
        columns={[
          { header: 'Name', cell: (k) => <span className="font-medium">{k.name}</span> },
          { header: 'Prefix', cell: (k) => <span className="font-mono text-xs">{k.prefix}…</span> },
          { header: 'Scopes', cell: (k) => <span className="font-mono text-xs">{k.scopes.join(', ')}</span> },
          { header: 'Rate limit', cell: (k) => (k.rateLimitPerMin === null ? <span className="text-slate-500">default</span> : `${k.rateLimitPerMin}/min`) },
          { header: 'Weight', cell: (k) => <span className="tabular-nums">{k.weight}</span> },
          { header: 'Job retention', cell: (k) => <KeyRetention apiKey={k} /> },
          { header: 'Created', cell: (k) => <RelativeTime iso={k.createdAt} /> },
          {
            header: 'State',
            cell: (k) =>
              k.revokedAt ? (
                <Badge tone="muted">
                  revoked <RelativeTime iso={k.revokedAt} />
                </Badge>
              ) : (
                <Badge tone="success">active</Badge>
              ),
          },
          {
            header: 'Actions',
            cell: (k) =>
              k.id === currentKeyId ? (
                <span className="text-xs text-slate-500">this session’s key</span>
              ) : k.revokedAt ? null : (
                <Button size="sm" variant="danger" disabled={revoke.isPending && revoke.variables === k.id} onClick={() => revoke.mutate(k.id)}>
                  Revoke
                </Button>
              ),
          },
        ]}
      />
    </div>
  );
}
