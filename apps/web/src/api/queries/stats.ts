import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import type { Stats } from '@inferq/contracts';
import { apiFetch } from '../client.ts';
import { queryKeys } from '../query-keys.ts';

const STATS_REFRESH_MS = 2000;

const statsOptions = (windowMinutes: number) =>
  queryOptions({
    queryKey: queryKeys.stats(windowMinutes),
    queryFn: ({ signal }) => apiFetch<Stats>('/v1/stats', { query: { windowMinutes }, signal }),
    refetchInterval: STATS_REFRESH_MS,
    placeholderData: keepPreviousData,
  });

export const useStats = (windowMinutes: number) => useQuery(statsOptions(windowMinutes));
