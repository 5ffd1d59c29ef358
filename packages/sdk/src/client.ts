import type { ApiKey, CreateKeyBody, CreatedKeySchema, Principal, Stats, StatsQuery, UpdateKeyBody, Usage, UsageQuery, WorkerStatus } from '@inferq/contracts';
import { createBatchesApi, type BatchesApi } from './batches.ts';
import { createFilesApi, type FilesApi } from './files.ts';
import { createHttpClient, type FetchLike } from './http.ts';
import { createInferenceBatchesApi, type InferenceBatchesApi } from './inference-batches.ts';
import { createJobsApi, type JobsApi } from './jobs.ts';
import { createModelsApi, type ModelsApi } from './models.ts';
import { DEFAULT_THRESHOLDS } from './submit-body.ts';
import type { SubmitRetryOptions } from './submit-retry.ts';
import { createUploadsApi, type UploadsApi } from './uploads.ts';

/** A new key with its secret, which the server shows only this once. */
export type CreatedKey = (typeof CreatedKeySchema)['static'];

export interface ClientOptions {
  /** Where the API listens, e.g. `https://inferq.example.com` (no `/v1`). */
  baseUrl: string;
  apiKey: string;
  /** Another fetch (a proxy, a test double); the global one by default. */
  fetch?: FetchLike;
  /** A submit whose input reaches this many bytes goes framed, its inputs binary (0: always; Infinity: never). @default 4096 */
  binaryThresholdBytes?: number;
  /** An input of this many bytes or more is uploaded first (POST /v1/uploads + PUT) and named by id (Infinity: never). @default 32 MiB */
  uploadThresholdBytes?: number;
  /**
   * Every submit carries an Idempotency-Key and is sent again under it while refused for now (429, 502, 503, 504; after
   * `Retry-After`, else a backoff) or unanswered (no connection, no answer in `attemptTimeoutMs`); `false`: sent once.
   * `files.upload` and `batches.create`, which the server does not deduplicate, are sent again only when refused (429, 503).
   * @default { attempts: 5, maxElapsedMs: 30000, attemptTimeoutMs: 10000 }
   */
  submitRetry?: SubmitRetryOptions | false;
}

export interface KeysApi {
  /** Admin only. `weight` (1..1000, default 1) is the key's share of each model's queue against other keys at the same priority. */
  create(body: CreateKeyBody): Promise<CreatedKey>;
  list(): Promise<ApiKey[]>;
  revoke(id: string): Promise<ApiKey>;
  /** Admin only. `retentionS`: seconds a finished job of the key is kept (at least 60); null: the server's default. */
  update(id: string, changes: UpdateKeyBody): Promise<ApiKey>;
}

export interface InferqClient {
  jobs: JobsApi;
  models: ModelsApi;
  keys: KeysApi;
  /** The Batch API (OpenAI's shapes): batches over uploaded JSONL files, one job a line, answered in an output and an error file. */
  batches: BatchesApi;
  /** The Batch API's files: request files up, output and error files down. */
  files: FilesApi;
  /** Where an inference batch (a worker's session run) ran, and its jobs' device time. Admin only. */
  inferenceBatches: InferenceBatchesApi;
  /** Tensor uploads for inputs too large for a request body (the submit does this itself past `uploadThresholdBytes`). */
  uploads: UploadsApi;
  /** Throughput, latency, queue depth and workers (the console's overview). */
  stats(query?: StatsQuery): Promise<Stats>;
  /**
   * Device time, jobs and items of the jobs that succeeded in a range (by finish time; the last 24 hours by default),
   * per key or per model version. A non-admin key sees only its own jobs.
   */
  usage(query?: UsageQuery): Promise<Usage>;
  /** Live worker processes, from their heartbeats. */
  workers(): Promise<WorkerStatus[]>;
  /** The caller's key: id, scopes, admin, weight. */
  me(): Promise<Principal>;
}

export function createClient(options: ClientOptions): InferqClient {
  const http = createHttpClient(options);
  const uploads = createUploadsApi(http);
  const thresholds = {
    binaryThresholdBytes: options.binaryThresholdBytes ?? DEFAULT_THRESHOLDS.binaryThresholdBytes,
    uploadThresholdBytes: options.uploadThresholdBytes ?? DEFAULT_THRESHOLDS.uploadThresholdBytes,
  };
  return {
    jobs: createJobsApi(http, uploads, thresholds, options.submitRetry),
    uploads,
    models: createModelsApi(http),
    keys: {
      create: async (body) => (await http.json<CreatedKey>('/v1/keys', { method: 'POST', body })).body,
      list: async () => (await http.json<{ items: ApiKey[] }>('/v1/keys')).body.items,
      revoke: async (id) => (await http.json<ApiKey>(`/v1/keys/${encodeURIComponent(id)}/revoke`, { method: 'POST' })).body,
      update: async (id, changes) => (await http.json<ApiKey>(`/v1/keys/${encodeURIComponent(id)}`, { method: 'PATCH', body: changes })).body,
    },
    batches: createBatchesApi(http, options.submitRetry),
    files: createFilesApi(http, options.submitRetry),
    inferenceBatches: createInferenceBatchesApi(http),
    stats: async (query = {}) => (await http.json<Stats>('/v1/stats', { query })).body,
    usage: async (query = {}) => (await http.json<Usage>('/v1/usage', { query })).body,
    workers: async () => (await http.json<{ items: WorkerStatus[] }>('/v1/workers')).body.items,
    me: async () => (await http.json<Principal>('/v1/me')).body,
  };
}
