import { isInferqError } from '@inferq/sdk';

export const isUnauthenticated = (err: unknown): boolean => isInferqError(err) && err.status === 401;

/** Title and detail to show for any error thrown by a query or mutation. */
export function errorSummary(err: unknown): { title: string; detail?: string; code?: string } {
  // The SDK's detail names the base URL, which is empty here; say what to check instead.
  if (isInferqError(err, 'NETWORK_ERROR')) return { title: err.title, detail: 'Check that the inferq API is running and reachable.', code: err.code };
  if (isInferqError(err)) return { title: err.title, detail: err.detail, code: err.code };
  return { title: 'Something went wrong', detail: err instanceof Error ? err.message : String(err) };
}

/**
 * The problem's per-field errors keyed by JSON pointer with `prefix` removed,
 * e.g. prefix `/body` turns `/body/name` into `name`.
 */
export function fieldErrors(err: unknown, prefix = ''): Record<string, string> {
  if (!isInferqError(err)) return {};
  const out: Record<string, string> = {};
  for (const e of err.errors) {
    if (!e.pointer.startsWith(prefix)) continue;
    const field = e.pointer.slice(prefix.length).replace(/^\//, '');
    out[field] ??= e.detail;
  }
  return out;
}
