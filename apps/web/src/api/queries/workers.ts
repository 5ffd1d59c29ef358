import { queryOptions, useQuery } from '@tanstack/react-query';
import { queryKeys } from '../query-keys.ts';
import { inferq } from '../sdk-client.ts';

const workersOptions = () => queryOptions({ queryKey: queryKeys.workers, queryFn: () => inferq().workers(), refetchInterval: 2000 });

export const useWorkers = () => useQuery(workersOptions());
