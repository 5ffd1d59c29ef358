import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { BulkJobActionResult, JobFilterQuery } from '@inferq/sdk';
import { queryKeys } from '../query-keys.ts';
import { inferq } from '../sdk-client.ts';

export type BulkJobAction = 'cancel' | 'retry';

interface BulkJobRequest {
  action: BulkJobAction;
  filter: JobFilterQuery;
  limit: number;
  dryRun: boolean;
}

const runBulkAction = ({ action, filter, limit, dryRun }: BulkJobRequest): Promise<BulkJobActionResult> =>
  action === 'cancel' ? inferq().jobs.bulkCancel(filter, { limit, dryRun }) : inferq().jobs.bulkRetry(filter, { limit, dryRun });

/** Cancels or retries every job matching a filter, or with `dryRun` only counts them; the job lists refresh after a real run. */
export function useBulkJobAction() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: runBulkAction,
    onSuccess: (result) => (result.dryRun ? undefined : queryClient.invalidateQueries({ queryKey: queryKeys.jobs.all })),
  });
}
