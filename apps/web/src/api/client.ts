import type { Problem } from '@inferq/contracts';
import { getApiKey } from '../auth/key-storage.ts';
import { ApiError } from './api-error.ts';

export interface ApiRequest {
  method?: 'GET' | 'POST';
  /** Sent as JSON, or as multipart when it is FormData. */
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  /** The key to send instead of the signed-in one (the sign-in check). */
  apiKey?: string;
  signal?: AbortSignal;
}

const withQuery = (path: string, query: ApiRequest['query']): string => {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined && value !== '') params.set(name, String(value));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
};

const isProblem = (value: unknown): value is Problem =>
  typeof value === 'object' && value !== null && typeof (value as Problem).title === 'string' && typeof (value as Problem).status === 'number';

async function toApiError(response: Response): Promise<ApiError> {
  const body: unknown = await response.json().catch(() => undefined);
  if (isProblem(body)) return new ApiError(body);
  return new ApiError({ type: 'about:blank', title: `The API answered ${response.status} ${response.statusText}`.trim(), status: response.status, code: 'HTTP_ERROR' });
}

/** One request to the API (same origin), authenticated with the API key. Throws ApiError on any failure. */
async function apiRequest(path: string, request: ApiRequest = {}): Promise<Response> {
  const headers = new Headers({ accept: 'application/json, application/problem+json' });
  const key = request.apiKey ?? getApiKey();
  if (key) headers.set('authorization', `Bearer ${key}`);
  let body: BodyInit | undefined;
  if (request.body instanceof FormData) body = request.body;
  else if (request.body !== undefined) {
    headers.set('content-type', 'application/json');
    body = JSON.stringify(request.body);
  }
  let response: Response;
  try {
    response = await fetch(withQuery(path, request.query), { method: request.method ?? 'GET', headers, body, signal: request.signal });
  } catch (err) {
    if (request.signal?.aborted) throw err;
    throw new ApiError({ type: 'about:blank', title: 'Cannot reach the API', status: 0, code: 'NETWORK_ERROR', detail: 'Check that the inferq API is running and reachable.' });
  }
  if (!response.ok) throw await toApiError(response);
  return response;
}

/** A JSON API call typed by its contract response. */
export async function apiFetch<T>(path: string, request: ApiRequest = {}): Promise<T> {
  const response = await apiRequest(path, request);
  return (await response.json()) as T;
}

/** Raw bytes (tensor downloads), which need the auth header and so cannot be plain links. */
export async function apiFetchBlob(path: string, request: ApiRequest = {}): Promise<Blob> {
  const response = await apiRequest(path, request);
  return response.blob();
}
