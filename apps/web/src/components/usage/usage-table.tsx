import type { Usage } from '@inferq/contracts';
import { formatMs } from '../../lib/format.ts';
import { usageRows, usageTotalRow, type UsageRow } from '../../lib/usage-report.ts';
import { DataTable, type Column } from '../ui/data-table.tsx';
import { ShareBar } from '../ui/share-bar.tsx';
import { EmptyState } from '../ui/states.tsx';

const num = (text: string) => <span className="tabular-nums">{text}</span>;

const columns = (groupBy: Usage['groupBy']): ReadonlyArray<Column<UsageRow>> => [
  {
    header: groupBy === 'model' ? 'Model' : 'API key',
    cell: (row) => (
      <span className={groupBy === 'model' ? 'font-mono' : undefined} title={row.detail}>
        {row.label}
        {row.detail && <span className="ml-2 font-mono text-xs font-normal text-slate-500">{row.detail}</span>}
      </span>
    ),
  },
  { header: 'Jobs', cell: (row) => num(row.jobs.toLocaleString()), className: 'text-right' },
  { header: 'Items', cell: (row) => num(row.items.toLocaleString()), className: 'text-right' },
  { header: 'Device time', cell: (row) => num(formatMs(row.deviceMs)), className: 'text-right' },
  { header: 'Share', cell: (row) => <ShareBar label={`Share of ${row.label}`} fraction={row.share} /> },
];

/** Device time per key or model version, largest first, with a totals row. */
export function UsageTable({ usage }: { usage: Usage }) {
  if (usage.items.length === 0) {
    return (
      <EmptyState title="No device time in this range">
        Jobs appear here once they succeed on a worker. Answers from the response cache ran nothing and cost nothing.
      </EmptyState>
    );
  }
  return <DataTable caption="Device time" columns={columns(usage.groupBy)} rows={usageRows(usage)} rowKey={(row) => row.id} footerRow={usageTotalRow(usage)} />;
}
