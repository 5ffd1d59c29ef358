import { queryOptions, useQuery } from '@tanstack/react-query';
import type { Principal } from '@inferq/contracts';
import { apiFetch } from '../client.ts';
import { queryKeys } from '../query-keys.ts';

export const fetchMe = (apiKey?: string): Promise<Principal> => apiFetch<Principal>('/v1/me', { apiKey });

export const meOptions = () =>
  queryOptions({ queryKey: queryKeys.me, queryFn: () => fetchMe(), staleTime: 60_000 });

/** Who the signed-in key is: its scopes and whether it is an admin. */
export const useMe = () => useQuery(meOptions());
