import { useCallback, useSyncExternalStore } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { Principal } from '@inferq/contracts';
import { queryKeys } from '../api/query-keys.ts';
import { clearApiKey, getApiKey, setApiKey, subscribeApiKey } from './key-storage.ts';

/** The signed-in API key, or null; re-renders on sign-in and sign-out (in any tab). */
export const useApiKey = (): string | null => useSyncExternalStore(subscribeApiKey, getApiKey);

/** Stores a key already checked with /v1/me; the cache starts empty so nothing of another key shows. */
export function useSignIn(): (key: string, principal: Principal) => void {
  const queryClient = useQueryClient();
  return useCallback(
    (key, principal) => {
      queryClient.clear();
      queryClient.setQueryData(queryKeys.me, principal);
      setApiKey(key);
    },
    [queryClient],
  );
}

export function useSignOut(): () => void {
  const queryClient = useQueryClient();
  return useCallback(() => {
    clearApiKey('signed-out');
    queryClient.clear();
  }, [queryClient]);
}
