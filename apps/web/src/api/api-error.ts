import type { Problem } from '@inferq/contracts';

/** A failed API call, carrying the server's problem+json (or one made up for network and non-JSON failures). */
export class ApiError extends Error {
  readonly status: number;
  readonly problem: Problem;

  constructor(problem: Problem) {
    super(problem.detail ?? problem.title);
    this.name = 'ApiError';
    this.status = problem.status;
    this.problem = problem;
  }
}

export const isApiError = (err: unknown): err is ApiError => err instanceof ApiError;

export const isUnauthenticated = (err: unknown): boolean => isApiError(err) && err.status === 401;

/** Title and detail to show for any error thrown by a query or mutation. */
export function errorSummary(err: unknown): { title: string; detail?: string; code?: string } {
  if (isApiError(err)) return { title: err.problem.title, detail: err.problem.detail, code: err.problem.code };
  return { title: 'Something went wrong', detail: err instanceof Error ? err.message : String(err) };
}

/**
 * The problem's per-field errors keyed by JSON pointer with `prefix` removed,
 * e.g. prefix `/body` turns `/body/name` into `name`.
 */
export function fieldErrors(err: unknown, prefix = ''): Record<string, string> {
  if (!isApiError(err)) return {};
  const out: Record<string, string> = {};
  for (const e of err.problem.errors ?? []) {
    if (!e.pointer.startsWith(prefix)) continue;
    const field = e.pointer.slice(prefix.length).replace(/^\//, '');
    out[field] ??= e.detail;
  }
  return out;
}
