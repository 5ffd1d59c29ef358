import { queryOptions, useQuery } from '@tanstack/react-query';
import { queryKeys } from '../query-keys.ts';
import { clientForKey, inferq } from '../sdk-client.ts';

/** Checks a key before it is stored (sign-in). */
export const fetchMeWithKey = (apiKey: string) => clientForKey(apiKey).me();

export const meOptions = () => queryOptions({ queryKey: queryKeys.me, queryFn: () => inferq().me(), staleTime: 60_000 });

/** Who the signed-in key is: its scopes and whether it is an admin. */
export const useMe = () => useQuery(meOptions());
