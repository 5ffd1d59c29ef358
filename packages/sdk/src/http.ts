import type { Problem } from '@inferq/contracts';
import { InferqError } from './errors.ts';

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;
type QueryValue = string | number | boolean | undefined;

interface HttpRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  query?: Readonly<Record<string, QueryValue>>;
  /** Sent as JSON; FormData as multipart; a Blob, Uint8Array or ReadableStream as is (give its content-type in `headers`). */
  body?: unknown;
  headers?: Readonly<Record<string, string>>;
  signal?: AbortSignal;
}

export interface HttpClient {
  /** The raw response of a 2xx answer; anything else throws InferqError. */
  send(path: string, request?: HttpRequest): Promise<Response>;
  json<T>(path: string, request?: HttpRequest): Promise<{ status: number; body: T }>;
  /** A request to another origin (a presigned upload URL): no API key; anything but 2xx throws InferqError. */
  external(
    url: string,
    init: { method: string; headers?: Readonly<Record<string, string>>; body?: Blob | Uint8Array; signal?: AbortSignal },
  ): Promise<Response>;
}

export const isReadableStream = (value: unknown): value is ReadableStream<Uint8Array> =>
  typeof ReadableStream !== 'undefined' && value instanceof ReadableStream;

const isProblem = (value: unknown): value is Problem =>
  typeof value === 'object' && value !== null && typeof (value as Problem).code === 'string' && typeof (value as Problem).status === 'number';

/** `Retry-After` as seconds: either delta-seconds or an HTTP date. */
function parseRetryAfter(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

async function toInferqError(response: Response): Promise<InferqError> {
  const body: unknown = await response.json().catch(() => undefined);
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
  if (isProblem(body)) return new InferqError(body, { retryAfter });
  const title = `The API answered ${response.status} ${response.statusText}`.trim();
  return new InferqError({ type: 'about:blank', title, status: response.status, code: 'HTTP_ERROR' }, { retryAfter });
}

function withQuery(url: string, query: HttpRequest['query']): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined) params.set(name, String(value));
  const text = params.toString();
  return text ? `${url}?${text}` : url;
}

export function createHttpClient(options: { baseUrl: string; apiKey: string; fetch?: FetchLike }): HttpClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  // Called through a closure: browsers throw "Illegal invocation" for a detached window.fetch.
  const fetchImpl: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init));

  async function send(path: string, request: HttpRequest = {}): Promise<Response> {
    const headers = new Headers({ accept: 'application/json, application/problem+json', authorization: `Bearer ${options.apiKey}`, ...request.headers });
    let body: BodyInit | undefined;
    const init: RequestInit & { duplex?: 'half' } = { method: request.method ?? 'GET', headers, signal: request.signal };
    if (request.body instanceof FormData || request.body instanceof Blob || request.body instanceof Uint8Array) body = request.body as BodyInit;
    else if (isReadableStream(request.body)) {
      body = request.body;
      // fetch sends a stream body only when told it may start before the answer (Node's fetch requires it).
      init.duplex = 'half';
    } else if (request.body !== undefined) {
      headers.set('content-type', 'application/json');
      body = JSON.stringify(request.body);
    }
    return fetchOk(withQuery(`${baseUrl}${path}`, request.query), { ...init, body }, baseUrl);
  }

  async function fetchOk(url: string, init: RequestInit, origin: string): Promise<Response> {
    let response: Response;
    try {
      response = await fetchImpl(url, init);
    } catch (err) {
      if (init.signal?.aborted) throw err;
      const detail = `cannot reach ${origin}: ${err instanceof Error ? err.message : String(err)}`;
      throw new InferqError({ type: 'about:blank', title: 'Cannot reach the API', status: 0, code: 'NETWORK_ERROR', detail }, { cause: err });
    }
    if (!response.ok) throw await toInferqError(response);
    return response;
  }

  return {
    send,
    external: (url, init) => fetchOk(url, { ...init, body: init.body as BodyInit | undefined }, new URL(url).origin),
    async json<T>(path: string, request?: HttpRequest) {
      const response = await send(path, request);
      return { status: response.status, body: (await response.json()) as T };
    },
  };
}
