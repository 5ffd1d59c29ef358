import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { ApiKey, CreateKeyBody } from '@inferq/contracts';
import { apiFetch } from '../client.ts';
import { queryKeys } from '../query-keys.ts';

export type CreatedKey = ApiKey & { secret: string };

export function useCreateKey() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: CreateKeyBody) => apiFetch<CreatedKey>('/v1/keys', { method: 'POST', body }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.keys.all }),
  });
}

export function useRevokeKey() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => apiFetch<ApiKey>(`/v1/keys/${encodeURIComponent(id)}/revoke`, { method: 'POST' }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.keys.all }),
  });
}
