import type { WorkerStatus } from '@inferq/contracts';
import { findAdaptiveBatching } from '../../lib/model-workers.ts';
import { EmptyState } from '../ui/states.tsx';
import { AdaptiveBatchingCard } from './adaptive-batching-card.tsx';

/** One card per worker batching model `name` adaptively, or why there is none yet. */
export function ModelAdaptiveBatching({ name, workers }: { name: string; workers: readonly WorkerStatus[] }) {
  const entries = findAdaptiveBatching(workers, name);
  if (entries.length === 0) {
    return (
      <EmptyState title="No measurements yet">
        Each worker serving {name} measures its inference time per batch size; the curve appears here once a worker has run batches of it.
      </EmptyState>
    );
  }
  return (
    <div className="grid gap-4 xl:grid-cols-2">
      {entries.map(({ worker, adaptive }) => (
        <AdaptiveBatchingCard key={worker.workerId} worker={worker} adaptive={adaptive} />
      ))}
    </div>
  );
}
