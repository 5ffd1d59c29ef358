import type { ModelRoute } from '@inferq/contracts';
import { formatPercent } from '../../lib/format.ts';
import { routeShares } from '../../lib/routing-draft.ts';
import { DataTable, type Column } from '../ui/data-table.tsx';

/** What happens to jobs naming the model without a version when the table is empty. */
export const NoRoutingNote = ({ latestVersion }: { latestVersion: number }) => (
  <p className="text-sm text-slate-600">No routing: jobs that name the model without a version run on the latest version, v{latestVersion}.</p>
);

/** The routing table as saved, with each version's share of unversioned jobs. */
export function RoutingTable({ routes, latestVersion }: { routes: readonly ModelRoute[]; latestVersion: number }) {
  if (routes.length === 0) return <NoRoutingNote latestVersion={latestVersion} />;
  const shares = routeShares(routes);
  const columns: ReadonlyArray<Column<ModelRoute>> = [
    { header: 'Version', cell: (r) => <span className="font-mono">v{r.version}</span> },
    { header: 'Weight', cell: (r) => <span className="tabular-nums">{r.weight}</span>, className: 'text-right' },
    { header: 'Share', cell: (r) => <span className="tabular-nums">{formatPercent(shares.get(r.version) ?? 0)}</span>, className: 'text-right' },
  ];
  return <DataTable caption="Routing table" columns={columns} rows={routes} rowKey={(r) => String(r.version)} />;
}
