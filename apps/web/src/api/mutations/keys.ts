import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { CreateKeyBody } from '@inferq/sdk';
import { queryKeys } from '../query-keys.ts';
import { inferq } from '../sdk-client.ts';

export function useCreateKey() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: CreateKeyBody) => inferq().keys.create(body),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.keys.all }),
  });
}

/** Sets key `id`'s job retention in seconds (null: the server's default). */
export function useSetKeyRetention(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (retentionS: number | null) => inferq().keys.update(id, { retentionS }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.keys.all }),
  });
}

export function useRevokeKey() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => inferq().keys.revoke(id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.keys.all }),
  });
}
