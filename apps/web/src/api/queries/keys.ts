import { queryOptions, useQuery } from '@tanstack/react-query';
import type { ApiKey } from '@inferq/contracts';
import { apiFetch } from '../client.ts';
import { queryKeys } from '../query-keys.ts';

const keysOptions = () =>
  queryOptions({
    queryKey: queryKeys.keys.all,
    queryFn: ({ signal }) => apiFetch<{ items: ApiKey[] }>('/v1/keys', { signal }),
    select: (data) => data.items,
  });

export const useApiKeys = () => useQuery(keysOptions());
