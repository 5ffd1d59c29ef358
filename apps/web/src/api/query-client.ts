import { MutationCache, QueryCache, QueryClient } from '@tanstack/react-query';
import { clearApiKey } from '../auth/key-storage.ts';
import { isInferqError } from '@inferq/sdk';
import { isUnauthenticated } from './api-error.ts';

/** A client error will not change on retry; network errors and 5xx may. */
const shouldRetry = (failureCount: number, error: unknown): boolean => failureCount < 2 && !(isInferqError(error) && error.status >= 400 && error.status < 500);

/** A key revoked while signed in ends the session at its first 401, from any query or mutation. */
const signOutWhenRejected = (error: unknown) => {
  if (isUnauthenticated(error)) clearApiKey('key-rejected');
};

export function createQueryClient(): QueryClient {
  return new QueryClient({
    queryCache: new QueryCache({ onError: signOutWhenRejected }),
    mutationCache: new MutationCache({ onError: signOutWhenRejected }),
    defaultOptions: { queries: { retry: shouldRetry } },
  });
}
