import { useState } from 'react';
import { useMe } from '../api/queries/me.ts';
import { useStats } from '../api/queries/stats.ts';
import { hasScope } from '../auth/permissions.ts';
import { ModelVersionTable } from '../components/overview/model-version-table.tsx';
import { QueueDepthTable } from '../components/overview/queue-depth-table.tsx';
import { StatsCharts } from '../components/overview/stats-charts.tsx';
import { DEFAULT_STATS_WINDOW_MINUTES, StatsWindowSelect } from '../components/overview/stats-window-select.tsx';
import { PageHeader } from '../components/ui/page-header.tsx';
import { RelativeTime } from '../components/ui/relative-time.tsx';
import { StatTile } from '../components/ui/stat-tile.tsx';
import { ErrorAlert, LoadingState } from '../components/ui/states.tsx';
import { formatMs, formatNumber, formatPercent, formatRate } from '../lib/format.ts';

export function OverviewPage() {
  const [windowMinutes, setWindowMinutes] = useState<number>(DEFAULT_STATS_WINDOW_MINUTES);
  const stats = useStats(windowMinutes);
  const { data: principal } = useMe();
  const windowPicker = <StatsWindowSelect windowMinutes={windowMinutes} onChange={setWindowMinutes} />;

  return (
    <>
      <PageHeader
        title="Overview"
        description={
          stats.data ? (
            <>
              Live, refreshed every 2 s · updated <RelativeTime iso={stats.data.generatedAt} />
              {stats.data.scope === 'key' && ' · jobs of this API key only'}
            </>
          ) : (
            'Live, refreshed every 2 s'
          )
        }
        actions={windowPicker}
      />
      {stats.isPending && <LoadingState label="Loading live figures…" />}
      {stats.isError && !stats.data && <ErrorAlert error={stats.error} onRetry={() => void stats.refetch()} />}
      {stats.data && (
        <div className="space-y-6">
          {stats.isError && <ErrorAlert error={stats.error} />}
          <dl className="grid grid-cols-2 gap-3 sm:grid-cols-3 lg:grid-cols-6">
            <StatTile label="Completed" value={formatRate(stats.data.completedPerSec)} hint="jobs per second" />
            <StatTile label="Submitted" value={formatRate(stats.data.submittedPerSec)} hint="jobs per second" />
            <StatTile label="Error rate" value={formatPercent(stats.data.errorRate)} hint={`${formatRate(stats.data.failedPerSec)} failed`} />
            <StatTile label="Avg batch size" value={formatNumber(stats.data.avgBatchSize)} hint="jobs per session run" />
            <StatTile label="Workers online" value={stats.data.workersOnline} />
            <StatTile label="Queued now" value={stats.data.queues.reduce((n, q) => n + q.high + q.normal + q.low + q.batch, 0)} hint="waiting, all models" />
          </dl>
          <dl className="grid grid-cols-2 gap-3 sm:grid-cols-3 lg:grid-cols-6">
            <StatTile label="Queue wait p50" value={formatMs(stats.data.queueMsP50)} />
            <StatTile label="Queue wait p95" value={formatMs(stats.data.queueMsP95)} />
            <StatTile label="Queue wait p99" value={formatMs(stats.data.queueMsP99)} />
            <StatTile label="Inference p50" value={formatMs(stats.data.inferMsP50)} />
            <StatTile label="Inference p95" value={formatMs(stats.data.inferMsP95)} />
            <StatTile label="Inference p99" value={formatMs(stats.data.inferMsP99)} />
          </dl>
          <section aria-labelledby="trends-heading" className="space-y-3">
            <h2 id="trends-heading" className="text-lg font-semibold">
              Per minute
            </h2>
            <StatsCharts points={stats.data.series} />
          </section>
          <section aria-labelledby="versions-heading" className="space-y-3">
            <h2 id="versions-heading" className="text-lg font-semibold">
              Per model version
            </h2>
            <ModelVersionTable models={stats.data.models} />
          </section>
          <section aria-labelledby="queues-heading" className="space-y-3">
            <h2 id="queues-heading" className="text-lg font-semibold">
              Queue depth
            </h2>
            <QueueDepthTable queues={stats.data.queues} canPause={hasScope(principal, 'admin')} />
          </section>
        </div>
      )}
    </>
  );
}
