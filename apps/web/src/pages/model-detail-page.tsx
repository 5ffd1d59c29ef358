import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { DEFAULT_LATENCY_TARGET_MS, type Model } from '@inferq/contracts';
import { useMe } from '../api/queries/me.ts';
import { useModel, useModelRouting, useModelVersions } from '../api/queries/models.ts';
import { useStats } from '../api/queries/stats.ts';
import { useWorkers } from '../api/queries/workers.ts';
import { hasScope } from '../auth/permissions.ts';
import { ModelAdaptiveBatching } from '../components/models/model-adaptive-batching.tsx';
import { ModelRetentionPanel } from '../components/models/model-retention.tsx';
import { EmbeddingsBadge, ResponseCacheBadge } from '../components/models/model-badges.tsx';
import { ModelVersionsTable } from '../components/models/model-versions-table.tsx';
import { PausedBadge, QueuePauseControl } from '../components/models/queue-pause-control.tsx';
import { ModelWorkers } from '../components/models/model-workers.tsx';
import { RoutingEditor } from '../components/models/routing-editor.tsx';
import { RoutingTable } from '../components/models/routing-table.tsx';
import { ModelVersionTable } from '../components/overview/model-version-table.tsx';
import { DEFAULT_STATS_WINDOW_MINUTES, StatsWindowSelect } from '../components/overview/stats-window-select.tsx';
import { Badge } from '../components/ui/badge.tsx';
import { buttonStyles } from '../components/ui/button.tsx';
import { Card } from '../components/ui/card.tsx';
import { PageHeader } from '../components/ui/page-header.tsx';
import { RelativeTime } from '../components/ui/relative-time.tsx';
import { EmptyState, ErrorAlert, LoadingState, RecordError } from '../components/ui/states.tsx';

const backLink = (
  <Link to="/models" className={buttonStyles({ variant: 'ghost', size: 'sm' })}>
    ← Models
  </Link>
);

/** One model: its versions, how unversioned jobs are split between them, how each version performs, and where it is loaded. */
export function ModelDetailPage() {
  const { name = '' } = useParams();
  const model = useModel(name);

  if (model.isPending)
    return (
      <>
        <PageHeader title={name} actions={backLink} />
        <LoadingState label="Loading model…" />
      </>
    );
  if (model.isError)
    return (
      <>
        <PageHeader title={name} actions={backLink} />
        <RecordError
          error={model.error}
          onRetry={() => void model.refetch()}
          notFound={<EmptyState title="Model not found">No model named {name} is registered.</EmptyState>}
        />
      </>
    );
  return <ModelDetail latest={model.data} />;
}

function ModelDetail({ latest }: { latest: Model }) {
  const { data: principal } = useMe();
  const versions = useModelVersions(latest.name, latest.version);
  const routing = useModelRouting(latest.name);
  const workers = useWorkers();
  const [windowMinutes, setWindowMinutes] = useState<number>(DEFAULT_STATS_WINDOW_MINUTES);
  const stats = useStats(windowMinutes);
  const versionStats = (stats.data?.models ?? []).filter((m) => m.model === latest.name).sort((a, b) => b.version - a.version);
  // Retired versions take no jobs, so the routing editor does not offer them; until the list is in, every number up to the latest.
  const versionNumbers = versions.data
    ? versions.data.filter((m) => !m.retiredAt).map((m) => m.version)
    : Array.from({ length: latest.version }, (_, i) => latest.version - i);
  const canRoute = hasScope(principal, 'models:write');
  const queue = stats.data?.queues.find((q) => q.model === latest.name);

  return (
    <>
      <PageHeader
        title={latest.name}
        description={
          <span className="inline-flex flex-wrap items-center gap-2">
            Latest v{latest.version}, registered <RelativeTime iso={latest.createdAt} />
            {latest.retiredAt && <Badge tone="muted">every version retired</Badge>}
            <ResponseCacheBadge on={latest.responseCache} />
            {latest.embedding && <EmbeddingsBadge />}
            {queue?.paused && <PausedBadge />}
          </span>
        }
        actions={
          <>
            {backLink}
            {queue && hasScope(principal, 'admin') && <QueuePauseControl model={latest.name} paused={queue.paused} />}
            {hasScope(principal, 'jobs:write') && (
              <Link to={`/playground?model=${encodeURIComponent(latest.name)}`} className={buttonStyles({ size: 'sm' })}>
                Try it
              </Link>
            )}
          </>
        }
      />
      <div className="space-y-6">
        <Card title="Routing">
          {routing.isPending && <LoadingState label="Loading routing…" />}
          {routing.isError && <ErrorAlert error={routing.error} onRetry={() => void routing.refetch()} />}
          {routing.data &&
            (canRoute ? (
              <RoutingEditor name={latest.name} versions={versionNumbers} saved={routing.data.versions} />
            ) : (
              <RoutingTable routes={routing.data.versions} latestVersion={latest.version} />
            ))}
        </Card>

        {latest.retention && (
          <Card title="Retention">
            <ModelRetentionPanel name={latest.name} retention={latest.retention} editable={canRoute} />
          </Card>
        )}

        <section aria-labelledby="version-stats-heading" className="space-y-3">
          <div className="flex flex-wrap items-end justify-between gap-3">
            <div>
              <h2 id="version-stats-heading" className="text-lg font-semibold">
                Per version
              </h2>
              <p className="text-sm text-slate-600">
                Finished jobs over the window, refreshed every 2 s{stats.data?.scope === 'key' && '; jobs of this API key only'}.
              </p>
            </div>
            <StatsWindowSelect windowMinutes={windowMinutes} onChange={setWindowMinutes} />
          </div>
          {stats.isPending && <LoadingState label="Loading figures…" />}
          {stats.isError && <ErrorAlert error={stats.error} onRetry={() => void stats.refetch()} />}
          {stats.data && <ModelVersionTable models={versionStats} />}
        </section>

        <section aria-labelledby="versions-heading" className="space-y-3">
          <h2 id="versions-heading" className="text-lg font-semibold">
            Versions
          </h2>
          {versions.error ? (
            <ErrorAlert error={versions.error} onRetry={() => void versions.refetch()} />
          ) : versions.data ? (
            <ModelVersionsTable versions={versions.data} canRetire={canRoute} />
          ) : (
            <LoadingState label="Loading versions…" />
          )}
        </section>

        {latest.batching.mode === 'auto' && (
          <section aria-labelledby="adaptive-batching-heading" className="space-y-3">
            <div>
              <h2 id="adaptive-batching-heading" className="text-lg font-semibold">
                Adaptive batching
              </h2>
              <p className="text-sm text-slate-600">
                Each worker measures the model on its device and picks the batch size (up to {latest.batching.maxBatchSize}) and delay (up to{' '}
                {latest.batching.maxBatchDelayMs} ms) with the best throughput that keeps the p99 queue wait under{' '}
                {latest.batching.latencyTargetMs ?? DEFAULT_LATENCY_TARGET_MS} ms.
              </p>
            </div>
            {workers.isPending && <LoadingState label="Loading workers…" />}
            {workers.data && <ModelAdaptiveBatching name={latest.name} workers={workers.data} />}
          </section>
        )}

        <Card title="Workers">
          {workers.isPending && <LoadingState label="Loading workers…" />}
          {workers.isError && !workers.data && <ErrorAlert error={workers.error} onRetry={() => void workers.refetch()} />}
          {workers.data && <ModelWorkers name={latest.name} workers={workers.data} />}
        </Card>
      </div>
    </>
  );
}
