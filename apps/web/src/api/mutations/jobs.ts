import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { Job, JobAccepted, SubmitJobBody } from '@inferq/contracts';
import { apiFetch } from '../client.ts';
import { queryKeys } from '../query-keys.ts';

export const submitJob = (body: SubmitJobBody): Promise<JobAccepted> => apiFetch<JobAccepted>('/v1/jobs', { method: 'POST', body });

const jobPath = (id: string, action: 'cancel' | 'retry') => `/v1/jobs/${encodeURIComponent(id)}/${action}`;

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
    mutationFn: (id: string) => apiFetch<Job>(jobPath(id, 'cancel'), { method: 'POST' }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.jobs.all }),
  });
}

/** Re-submits a job as a new one with the same model version, priority and inputs. */
export function useRetryJob() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => apiFetch<JobAccepted>(jobPath(id, 'retry'), { method: 'POST' }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.jobs.all }),
  });
}
