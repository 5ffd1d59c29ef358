import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { JobAccepted, SubmitRequest } from '@inferq/sdk';
import { queryKeys } from '../query-keys.ts';
import { inferq } from '../sdk-client.ts';

export const submitJob = (body: SubmitRequest): Promise<JobAccepted> => inferq().jobs.submit(body);

export function useSubmitJob() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: submitJob,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.jobs.all }),
  });
}

/** Cancels a queued job (409 JOB_NOT_CANCELABLE once it runs). */
export function useCancelJob() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => inferq().jobs.cancel(id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.jobs.all }),
  });
}

/** Purges a job now (409 JOB_RUNNING while it runs); its detail then answers 410 JOB_PURGED. */
export function useDeleteJob() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => inferq().jobs.delete(id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.jobs.all }),
  });
}

/** Re-submits a job as a new one with the same model version, priority and inputs. */
export function useRetryJob() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => inferq().jobs.retry(id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.jobs.all }),
  });
}
