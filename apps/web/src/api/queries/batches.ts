import { queryOptions, useQuery } from '@tanstack/react-query';
import { queryKeys } from '../query-keys.ts';
import { inferq } from '../sdk-client.ts';

// A batch is written once it has run; only its jobs' statuses can still settle, so a short staleness is enough.
const batchOptions = (id: string) => queryOptions({ queryKey: queryKeys.batches.detail(id), queryFn: () => inferq().batches.get(id), staleTime: 30_000 });

/** One batch's provenance and jobs; `enabled` false for keys that may not read it (admin only). */
export const useBatch = (id: string, enabled: boolean) => useQuery({ ...batchOptions(id), enabled });
