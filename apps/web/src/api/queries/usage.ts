import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { toUsageQuery, type UsageView } from '../../lib/usage-report.ts';
import { queryKeys } from '../query-keys.ts';
import { inferq } from '../sdk-client.ts';

/** Device time moves slowly next to the live overview: once a minute keeps "the last 24 hours" current. */
const USAGE_REFRESH_MS = 60_000;

const usageOptions = (view: UsageView) =>
  queryOptions({
    queryKey: queryKeys.usage(view),
    // The range is measured back from fetch time, so each refetch slides it.
    queryFn: () => inferq().usage(toUsageQuery(view, Date.now())),
    placeholderData: keepPreviousData,
    refetchInterval: USAGE_REFRESH_MS,
  });

export const useUsage = (view: UsageView) => useQuery(usageOptions(view));
