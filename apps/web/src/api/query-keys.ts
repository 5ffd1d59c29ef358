import type { JobFilters } from '../lib/job-filters.ts';
import type { UsageView } from '../lib/usage-report.ts';

/** Every query key the console uses, so invalidation targets are named in one place. */
export const queryKeys = {
  me: ['me'] as const,
  stats: (windowMinutes: number) => ['stats', windowMinutes] as const,
  /** Every window's stats: what a change to a queue invalidates. */
  allStats: ['stats'] as const,
  workers: ['workers'] as const,
  models: {
    all: ['models'] as const,
    list: () => ['models', 'list'] as const,
    detail: (ref: string) => ['models', 'detail', ref] as const,
    routing: (name: string) => ['models', 'routing', name] as const,
    versions: (name: string, latest: number) => ['models', 'versions', name, latest] as const,
  },
  jobs: {
    all: ['jobs'] as const,
    list: (filters: JobFilters, cursor: string | undefined) => ['jobs', 'list', filters, cursor ?? null] as const,
    detail: (id: string) => ['jobs', 'detail', id] as const,
    run: (model: string, ids: readonly string[]) => ['jobs', 'run', model, ids] as const,
  },
  keys: { all: ['keys'] as const },
  usage: (view: UsageView) => ['usage', view.range, view.groupBy] as const,
  /** Batch API batches (`/v1/batches`). */
  batches: {
    all: ['batches'] as const,
    list: (after: string | undefined) => ['batches', 'list', after ?? null] as const,
    detail: (id: string) => ['batches', 'detail', id] as const,
  },
  /** A worker's session runs (`/v1/inference-batches/:id`), with their provenance. */
  inferenceBatches: { detail: (id: string) => ['inference-batches', 'detail', id] as const },
};
