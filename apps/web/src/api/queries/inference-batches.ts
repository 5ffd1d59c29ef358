import { queryOptions, useQuery } from '@tanstack/react-query';
import { queryKeys } from '../query-keys.ts';
import { inferq } from '../sdk-client.ts';

// An inference batch is written once it has run; only its jobs' statuses can still settle, so a short staleness is enough.
const inferenceBatchOptions = (id: string) =>
  queryOptions({ queryKey: queryKeys.inferenceBatches.detail(id), queryFn: () => inferq().inferenceBatches.get(id), staleTime: 30_000 });

/** One inference batch's provenance and jobs; `enabled` false for keys that may not read it (admin only). */
export const useInferenceBatch = (id: string, enabled: boolean) => useQuery({ ...inferenceBatchOptions(id), enabled });
