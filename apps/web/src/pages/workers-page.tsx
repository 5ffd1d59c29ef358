import { useWorkers } from '../api/queries/workers.ts';
import { WorkerCard } from '../components/workers/worker-card.tsx';
import { PageHeader } from '../components/ui/page-header.tsx';
import { EmptyState, ErrorAlert, LoadingState } from '../components/ui/states.tsx';

export function WorkersPage() {
  const workers = useWorkers();
  return (
    <>
      <PageHeader title="Workers" description="Worker processes with a live heartbeat; refreshed every 2 s." />
      {workers.isPending && <LoadingState label="Loading workers…" />}
      {workers.isError && !workers.data && <ErrorAlert error={workers.error} onRetry={() => void workers.refetch()} />}
      {workers.data?.length === 0 && (
        <EmptyState title="No workers online">
          Jobs wait in their queues until a worker starts. Start one per GPU (or one on the CPU) with the worker launcher.
        </EmptyState>
      )}
      {workers.data && workers.data.length > 0 && (
        <div className="grid gap-4 lg:grid-cols-2">
          {workers.data.map((worker) => (
            <WorkerCard key={worker.workerId} worker={worker} />
          ))}
        </div>
      )}
    </>
  );
}
