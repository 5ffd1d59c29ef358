import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { ModelRoute, ModelUpload } from '@inferq/sdk';
import { queryKeys } from '../query-keys.ts';
import { inferq } from '../sdk-client.ts';

/** Registers an ONNX file as the next version of its name. */
export function useUploadModel() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (upload: ModelUpload) => inferq().models.upload(upload),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.models.all }),
  });
}

/** Replaces `name`'s routing table; `[]` removes routing. */
export function useSetModelRouting(name: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (routes: ModelRoute[]) => inferq().models.setRouting(name, routes),
    onSuccess: (routing) => {
      queryClient.setQueryData(queryKeys.models.routing(name), routing);
      // The model views carry the table too.
      return queryClient.invalidateQueries({ queryKey: queryKeys.models.all });
    },
  });
}

/** Sets how long `name`'s finished jobs are kept, in seconds (null: back to the default); the model views, which show it, are read again. */
export function useSetModelRetention(name: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (retentionS: number | null) => inferq().models.setRetention(name, retentionS),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.models.all }),
  });
}

/** Pauses (`true`) or resumes (`false`) `name`'s queue; the stats, which show it, are read again. */
export function useSetQueuePaused(name: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (paused: boolean) => (paused ? inferq().models.pause(name) : inferq().models.resume(name)),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.allStats }),
  });
}

/** Retires `version` of `name` (`reroute`: take it out of the routing table too); the model views and stats are read again. */
export function useRetireModelVersion(name: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ version, reroute }: { version: number; reroute: boolean }) => inferq().models.retire(name, version, { reroute }),
    onSuccess: () =>
      Promise.all([queryClient.invalidateQueries({ queryKey: queryKeys.models.all }), queryClient.invalidateQueries({ queryKey: queryKeys.allStats })]),
  });
}
