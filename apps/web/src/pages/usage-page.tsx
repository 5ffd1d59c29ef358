import { useSearchParams } from 'react-router';
import { useMe } from '../api/queries/me.ts';
import { useUsage } from '../api/queries/usage.ts';
import { PageHeader } from '../components/ui/page-header.tsx';
import { ErrorAlert, LoadingState } from '../components/ui/states.tsx';
import { UsageTable } from '../components/usage/usage-table.tsx';
import { UsageViewSelect } from '../components/usage/usage-view-select.tsx';
import { formatDateTime } from '../lib/format.ts';
import { usageViewFromSearchParams, usageViewToSearchParams } from '../lib/usage-report.ts';

export function UsagePage() {
  const [searchParams, setSearchParams] = useSearchParams();
  const view = usageViewFromSearchParams(searchParams);
  const usage = useUsage(view);
  const { data: principal } = useMe();
  const whose = principal === undefined ? '' : principal.admin ? ' · every API key' : ' · jobs of this API key only';

  return (
    <>
      <PageHeader
        title="Usage"
        description={
          usage.data
            ? `Device time of succeeded jobs, ${formatDateTime(usage.data.from)} – ${formatDateTime(usage.data.to)}${whose}`
            : `Device time of succeeded jobs${whose}`
        }
        actions={<UsageViewSelect view={view} onChange={(next) => setSearchParams(usageViewToSearchParams(next), { replace: true })} />}
      />
      {usage.isPending && <LoadingState label="Loading usage…" />}
      {usage.isError && !usage.data && <ErrorAlert error={usage.error} onRetry={() => void usage.refetch()} />}
      {usage.data && (
        <div aria-busy={usage.isPlaceholderData} className={`space-y-4 ${usage.isPlaceholderData ? 'opacity-60' : ''}`}>
          {usage.isError && <ErrorAlert error={usage.error} />}
          <UsageTable usage={usage.data} />
          <p className="text-xs text-slate-500">
            Each batch’s device time is split over its jobs by their share of its items (rows along the batch dimension). Failed jobs and cache hits are not
            charged.
          </p>
        </div>
      )}
    </>
  );
}
