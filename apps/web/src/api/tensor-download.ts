import { InferqError } from '@inferq/sdk';
import type { Problem } from '@inferq/contracts';
import { getApiKey } from '../auth/key-storage.ts';

const isProblem = (value: unknown): value is Problem =>
  typeof value === 'object' && value !== null && typeof (value as Problem).code === 'string' && typeof (value as Problem).status === 'number';

/**
 * A tensor's raw bytes (`/v1/jobs/:id/inputs|outputs/:index`). The SDK has no
 * call for these (its readOutput decodes outputs only), so this one request is
 * made here, failing with InferqError like the SDK's calls.
 */
export async function downloadTensor(path: string): Promise<Blob> {
  let response: Response;
  try {
    const apiKey = getApiKey();
    response = await fetch(path, { headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {} });
  } catch (err) {
    throw new InferqError({ type: 'about:blank', title: 'Cannot reach the API', status: 0, code: 'NETWORK_ERROR' }, { cause: err });
  }
  if (response.ok) return response.blob();
  const body: unknown = await response.json().catch(() => undefined);
  const title = `The API answered ${response.status} ${response.statusText}`.trim();
  throw new InferqError(isProblem(body) ? body : { type: 'about:blank', title, status: response.status, code: 'HTTP_ERROR' });
}
