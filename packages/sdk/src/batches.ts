import type { BulkBatch, BulkBatchList, CreateBulkBatchBody, ListBulkBatchesQuery } from '@inferq/contracts';
import { InferqError } from './errors.ts';
import type { HttpClient } from './http.ts';
import { eachOfPages } from './openai-pages.ts';
import { resolveSubmitRetry, sendWhileRefused, type SubmitRetryOptions } from './submit-retry.ts';
import { sleep } from './wait-for-job.ts';

// Batch API batches (POST /v1/batches and the rest), OpenAI's shapes: a batch
// over an uploaded file runs each line as a job and ends with an output and an
// error file (`client.files`).

export type BulkBatchStatus = BulkBatch['status'];
export type BatchesQuery = Omit<ListBulkBatchesQuery, 'after'>;

/** A batch to create: `endpoint` `/v1/jobs` and `completion_window` `24h` unless given. */
export type CreateBatchRequest = Omit<CreateBulkBatchBody, 'endpoint' | 'completion_window'> &
  Partial<Pick<CreateBulkBatchBody, 'endpoint' | 'completion_window'>>;

/** The statuses a batch ends in: nothing changes after them. */
export const BATCH_END_STATUSES: readonly BulkBatchStatus[] = ['completed', 'failed', 'expired', 'cancelled'];
export const isBatchEnded = (status: BulkBatchStatus): boolean => BATCH_END_STATUSES.includes(status);

/** Where a batch stands while it runs: requests answered so far, the rate since `since`, and the time left at that rate. */
export interface BatchProgress {
  done: number;
  total: number;
  /** Requests answered per second since `since`; undefined until time has passed. */
  perS: number | undefined;
  /** Seconds left at `perS`; undefined until a request was answered after `since`. */
  etaS: number | undefined;
}

/**
 * `since` is a mark taken by the caller (`at` in ms, `done` then); without it the rate counts from `in_progress_at`,
 * when the batch began running (none before it has: no rate, no time left).
 */
export function batchProgress(batch: BulkBatch, since: { at: number; done: number } | undefined, now = Date.now()): BatchProgress {
  const { total, completed, failed } = batch.request_counts;
  const done = completed + failed;
  since ??= batch.in_progress_at === null ? undefined : { at: batch.in_progress_at * 1000, done: 0 };
  if (since === undefined) return { done, total, perS: undefined, etaS: undefined };
  const seconds = (now - since.at) / 1000;
  const perS = seconds > 0 ? (done - since.done) / seconds : undefined;
  return { done, total, perS, etaS: perS ? Math.max(0, total - done) / perS : undefined };
}

export interface BatchCreateOptions {
  /** Over the client's `submitRetry`: a create refused for now (429, 503) is sent again; one left unanswered is not. `false`: sent once. */
  submitRetry?: SubmitRetryOptions | false;
  signal?: AbortSignal;
}

export interface BatchWaitOptions {
  /** Called with the batch after every poll, the first included: its `status` and `request_counts`. */
  onProgress?: (batch: BulkBatch) => void;
  /** The pause between polls. @default 2000 */
  pollMs?: number;
  /** Stops waiting (the batch goes on; `cancel` stops it): the wait rejects with the signal's reason. `AbortSignal.timeout(ms)` bounds it. */
  signal?: AbortSignal;
}

export interface BatchesApi {
  /** Creates a batch over a file uploaded with `files.upload`; it answers `validating`. */
  create(body: CreateBatchRequest, options?: BatchCreateOptions): Promise<BulkBatch>;
  get(id: string): Promise<BulkBatch>;
  /** Every batch of the key, newest first, fetching pages (`limit` each) as it goes. */
  list(query?: BatchesQuery): AsyncIterableIterator<BulkBatch>;
  /** One page; pass `last_id` back as `after` for the next while `has_more`. */
  page(query?: ListBulkBatchesQuery): Promise<BulkBatchList>;
  /** Asks the batch to stop: it answers `cancelling`, then ends `cancelled` with the files of what was done (409 `BATCH_NOT_CANCELABLE` once ended). */
  cancel(id: string): Promise<BulkBatch>;
  /**
   * Polls every `pollMs` until the batch has ended (completed, failed, expired or cancelled) and resolves to it, calling
   * `onProgress` with each poll's batch. Throttling and brief outages (429, 503, no connection) are waited out.
   */
  wait(id: string, options?: BatchWaitOptions): Promise<BulkBatch>;
}

const batchPath = (id: string) => `/v1/batches/${encodeURIComponent(id)}`;

export function createBatchesApi(http: HttpClient, submitRetry: SubmitRetryOptions | false | undefined): BatchesApi {
  const get: BatchesApi['get'] = async (id) => (await http.json<BulkBatch>(batchPath(id))).body;
  const page: BatchesApi['page'] = async (query = {}) => (await http.json<BulkBatchList>('/v1/batches', { query })).body;

  return {
    create: (request, options = {}) => {
      const body: CreateBulkBatchBody = { endpoint: '/v1/jobs', completion_window: '24h', ...request };
      const send = async () => (await http.json<BulkBatch>('/v1/batches', { method: 'POST', body, signal: options.signal })).body;
      return sendWhileRefused(send, resolveSubmitRetry(submitRetry, options.submitRetry), { signal: options.signal, replayable: true });
    },
    get,
    list: (query = {}) => eachOfPages(page, query),
    page,
    cancel: async (id) => (await http.json<BulkBatch>(`${batchPath(id)}/cancel`, { method: 'POST' })).body,
    async wait(id, options = {}) {
      const pollMs = options.pollMs ?? 2000;
      for (;;) {
        let pauseMs = pollMs;
        try {
          const batch = (await http.json<BulkBatch>(batchPath(id), { signal: options.signal })).body;
          options.onProgress?.(batch);
          if (isBatchEnded(batch.status)) return batch;
        } catch (err) {
          if (options.signal?.aborted || !(err instanceof InferqError) || !err.retryable) throw err;
          if (err.retryAfter !== undefined) pauseMs = Math.max(pauseMs, err.retryAfter * 1000);
        }
        await sleep(pauseMs, options.signal);
      }
    },
  };
}
