import { queryOptions, useQuery } from '@tanstack/react-query';
import { queryKeys } from '../query-keys.ts';
import { inferq } from '../sdk-client.ts';

const keysOptions = () => queryOptions({ queryKey: queryKeys.keys.all, queryFn: () => inferq().keys.list() });

export const useApiKeys = () => useQuery(keysOptions());
