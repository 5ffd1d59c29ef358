import { useMutation, useQueryClient } from '@tanstack/react-query';
import { queryKeys } from '../query-keys.ts';
import { inferq } from '../sdk-client.ts';

/** Asks a batch to stop (it answers `cancelling`; 409 BATCH_NOT_CANCELABLE once ended); its page shows the answer at once and polls on. */
export function useCancelBatch() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => inferq().batches.cancel(id),
    onSuccess: (batch) => {
      queryClient.setQueryData(queryKeys.batches.detail(batch.id), batch);
      return queryClient.invalidateQueries({ queryKey: queryKeys.batches.all });
    },
  });
}
