import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { queryKeys } from '../query-keys.ts';
import { inferq } from '../sdk-client.ts';

const STATS_REFRESH_MS = 2000;

const statsOptions = (windowMinutes: number) =>
  queryOptions({
    queryKey: queryKeys.stats(windowMinutes),
    queryFn: () => inferq().stats({ windowMinutes }),
    refetchInterval: STATS_REFRESH_MS,
    placeholderData: keepPreviousData,
  });

export const useStats = (windowMinutes: number) => useQuery(statsOptions(windowMinutes));
