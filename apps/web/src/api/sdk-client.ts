import { createClient, type InferqClient } from '@inferq/sdk';
import { getApiKey } from '../auth/key-storage.ts';

// An empty base URL keeps paths relative: the API serves the console (and Vite proxies to it in development).
const SAME_ORIGIN = '';

/** A client that sends `apiKey`: the sign-in check, before the key is stored. */
export const clientForKey = (apiKey: string): InferqClient => createClient({ baseUrl: SAME_ORIGIN, apiKey });

let session: { apiKey: string; client: InferqClient } | undefined;

/** The client of the signed-in key, made again when the key changes (sign-in, sign-out, another tab). */
export function inferq(): InferqClient {
  const apiKey = getApiKey() ?? '';
  if (session?.apiKey !== apiKey) session = { apiKey, client: clientForKey(apiKey) };
  return session.client;
}
