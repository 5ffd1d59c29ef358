import { queryOptions, useQuery } from '@tanstack/react-query';
import type { WorkerStatus } from '@inferq/contracts';
import { apiFetch } from '../client.ts';
import { queryKeys } from '../query-keys.ts';

const workersOptions = () =>
  queryOptions({
    queryKey: queryKeys.workers,
    queryFn: ({ signal }) => apiFetch<{ items: WorkerStatus[] }>('/v1/workers', { signal }),
    select: (data) => data.items,
    refetchInterval: 2000,
  });

export const useWorkers = () => useQuery(workersOptions());
