import type { BulkJobActionResult, DataType, Job, JobAccepted, JobFilterQuery, JobList, JobTombstone, ListJobsQuery } from '@inferq/contracts';
import type { HttpClient } from './http.ts';
import { BINARY_ACCEPT, decodeJobResponse, type DecodedJob } from './job-response.ts';
import { buildSubmitBody, planInputs, type SubmitRequest, type TransferThresholds } from './submit-body.ts';
import { isReplayableBody, newIdempotencyKey, resolveSubmitRetry, sendWithRetry, type SubmitRetryOptions } from './submit-retry.ts';
import { typedArrayFromBytes, outputArray, type TypedArrayOf } from './tensors.ts';
import type { UploadsApi } from './uploads.ts';
import { waitForJob, type WaitOptions } from './wait-for-job.ts';

/** A job as the list shows it: no outputs. */
export type JobSummary = JobList['items'][number];
export type JobsQuery = Omit<ListJobsQuery, 'cursor'>;
export type OutputEncoding = 'json' | 'base64';

export interface SubmitOptions extends Partial<TransferThresholds> {
  /**
   * The same key and body return the same job, so a submit is safe to send again. A fresh UUID by default, one per
   * call and the same for each of its tries; give your own to retry safely across calls or processes (at most 200 characters).
   */
  idempotencyKey?: string;
  /** This call's retry of refused (429, 502, 503, 504) and unanswered tries, over the client's `submitRetry`; `false`: sent once. */
  submitRetry?: SubmitRetryOptions | false;
  /** Seconds to hold the reply for the result (`Prefer: wait=N`); the server caps it (WAIT_MAX_S). */
  wait?: number;
  /** With `wait`: ask for the finished job framed (`Accept: application/octet-stream`) and answer it with typed-array outputs. */
  binary?: boolean;
  signal?: AbortSignal;
}

export interface GetOptions {
  encoding?: OutputEncoding;
  /** Read the job framed (`Accept: application/octet-stream`): outputs come back as typed arrays (`values`). JSON servers work too. */
  binary?: boolean;
  signal?: AbortSignal;
}

/** What `submit` answers: the accepted job, or with `wait` the finished job when it ended in time. */
export type SubmitResult = JobAccepted | Job;

export interface BulkActionOptions {
  /** Act on at most this many jobs, oldest first (1 to 10000). @default 1000 */
  limit?: number;
  /** Only count the matching jobs; change nothing. @default false */
  dryRun?: boolean;
}

/** A call that creates jobs from others (`retry`, `bulkRetry`): sent under a key, and sent again as a submit is. */
export interface RetryCallOptions {
  /** The same key again answers what the first call created (a fresh UUID per call by default). */
  idempotencyKey?: string;
  /** Over the client's `submitRetry`; `false`: sent once. */
  submitRetry?: SubmitRetryOptions | false;
  signal?: AbortSignal;
}

/** True when a submit with `wait` came back with the finished job (outputs included). */
export const isFinishedJob = (result: SubmitResult): result is Job => 'model' in result;

export interface JobsApi {
  /**
   * Submits a job. Inputs may be JSON values, base64, typed arrays or upload references; an input reaching
   * `binaryThresholdBytes` (4 KiB by default) makes the body framed with every input binary, and one reaching
   * `uploadThresholdBytes` (32 MiB) is uploaded first and named by its upload id. Sent with an Idempotency-Key (a fresh
   * UUID unless given) and sent again under it, the same bytes, while refused for now or unanswered (`submitRetry`);
   * uploads are made once, before the first try.
   */
  submit(body: SubmitRequest, options?: SubmitOptions & { wait?: undefined }): Promise<JobAccepted>;
  submit(body: SubmitRequest, options: SubmitOptions & { binary: true }): Promise<JobAccepted | DecodedJob>;
  submit(body: SubmitRequest, options: SubmitOptions): Promise<SubmitResult>;
  get(id: string, options: GetOptions & { binary: true }): Promise<DecodedJob>;
  get(id: string, options?: GetOptions): Promise<Job>;
  /** Polls with backoff until the job is succeeded, failed, canceled or expired. */
  wait(id: string, options: WaitOptions & { binary: true }): Promise<DecodedJob>;
  wait(id: string, options: WaitOptions): Promise<Job>;
  /** Every job matching the query, newest first, fetching pages (`limit` each) as it goes. */
  list(query?: JobsQuery): AsyncIterableIterator<JobSummary>;
  /** One page; pass `nextCursor` back as `cursor` for the next. */
  page(query?: ListJobsQuery): Promise<JobList>;
  cancel(id: string): Promise<Job>;
  /**
   * A new job with the same model version, inputs and metadata (410 `JOB_INPUTS_DROPPED` once its inputs were dropped).
   * Sent with an Idempotency-Key and again under it while refused for now or unanswered, as `submit` is.
   */
  retry(id: string, options?: RetryCallOptions): Promise<JobAccepted>;
  /**
   * Purges the job now (its owner or an admin): its data and S3 objects are deleted and the tombstone is returned.
   * A queued job is canceled first; a running one throws 409 `JOB_RUNNING` (with `retryAfter`). Reading it afterwards is 410 `JOB_PURGED`.
   */
  delete(id: string): Promise<JobTombstone>;
  /** Cancels the queued jobs matching the filter (at least one field), up to `limit`; `truncated` says more matched. */
  bulkCancel(filter: JobFilterQuery, options?: BulkActionOptions): Promise<BulkJobActionResult>;
  /**
   * Retries, as new jobs, the failed, canceled and expired jobs matching the filter, up to `limit`. Sent with an
   * Idempotency-Key (each job is retried once under it) and again under it, as `submit` is; each try may take 10 ms per job of `limit` more.
   */
  bulkRetry(filter: JobFilterQuery, options?: BulkActionOptions & RetryCallOptions): Promise<BulkJobActionResult>;
  /** One output as a typed array: inline data decoded, or the raw bytes downloaded when the output is large. */
  readOutput<D extends DataType = DataType>(job: Job, name: string, datatype?: D): Promise<TypedArrayOf[D]>;
}

const jobPath = (id: string) => `/v1/jobs/${encodeURIComponent(id)}`;

export function createJobsApi(
  http: HttpClient,
  uploads: UploadsApi,
  thresholds: TransferThresholds,
  submitRetry: SubmitRetryOptions | false | undefined,
): JobsApi {
  const download = async (job: Job, index: number) => new Uint8Array(await (await http.send(`${jobPath(job.id)}/outputs/${index}`)).arrayBuffer());
  const get = (async (id: string, options: GetOptions = {}): Promise<Job | DecodedJob> => {
    if (!options.binary) return (await http.json<Job>(jobPath(id), { query: { encoding: options.encoding }, signal: options.signal })).body;
    const response = await http.send(jobPath(id), { headers: { accept: BINARY_ACCEPT }, query: { encoding: options.encoding }, signal: options.signal });
    return decodeJobResponse(response, download);
  }) as JobsApi['get'];
  const page: JobsApi['page'] = async (query = {}) => (await http.json<JobList>('/v1/jobs', { query })).body;
  /** A POST that creates jobs: under the caller's key or a fresh one, sent again as a submit is. */
  const createJobs = <T>(path: string, body: unknown, options: RetryCallOptions, allowanceMs = 0): Promise<T> => {
    const headers = { 'idempotency-key': options.idempotencyKey ?? newIdempotencyKey() };
    const send = (signal: AbortSignal | undefined) => http.send(path, { method: 'POST', body, headers, signal });
    const policy = resolveSubmitRetry(submitRetry, options.submitRetry);
    return sendWithRetry(send, async (response) => (await response.json()) as T, policy, { signal: options.signal, allowanceMs, replayable: true });
  };

  return {
    // One implementation behind both overloads: what comes back depends on the server's answer, not on the types.
    submit: (async (request: SubmitRequest, options: SubmitOptions = {}): Promise<SubmitResult | DecodedJob> => {
      const { inputs, ...rest } = request;
      const planned = planInputs(inputs, { ...thresholds, ...definedThresholds(options) });
      const uploadIds = new Map<number, string>();
      for (const [i, p] of planned.entries())
        if (p.kind === 'upload') uploadIds.set(i, await uploads.put({ ...p.head, bytes: p.bytes }, { signal: options.signal }));
      const wire = buildSubmitBody(rest, planned, uploadIds);
      const headers: Record<string, string> = 'framed' in wire ? { ...wire.headers } : {};
      headers['idempotency-key'] = options.idempotencyKey ?? newIdempotencyKey();
      if (options.wait !== undefined) headers.prefer = `wait=${Math.max(0, Math.round(options.wait))}`;
      if (options.binary) headers.accept = BINARY_ACCEPT;
      const body = 'framed' in wire ? wire.framed : wire.json;
      const read = async (response: Response): Promise<SubmitResult | DecodedJob> => {
        if (response.status === 202 && !response.headers.get('content-type')?.includes('octet-stream')) return (await response.json()) as SubmitResult;
        return options.binary ? decodeJobResponse(response, download) : ((await response.json()) as SubmitResult);
      };
      return sendWithRetry(
        (signal) => http.send('/v1/jobs', { method: 'POST', body, headers, signal }),
        read,
        resolveSubmitRetry(submitRetry, options.submitRetry),
        {
          signal: options.signal,
          allowanceMs: (options.wait ?? 0) * 1000,
          bodyBytes: body instanceof Blob ? body.size : 0,
          replayable: isReplayableBody(body),
        },
      );
    }) as JobsApi['submit'],
    get,
    wait: ((id: string, options: WaitOptions) =>
      waitForJob((signal) => get(id, { encoding: options.encoding, binary: options.binary, signal }) as Promise<Job>, id, options)) as JobsApi['wait'],
    async *list(query = {}) {
      let cursor: string | undefined;
      do {
        const { items, nextCursor } = await page({ ...query, cursor });
        yield* items;
        cursor = nextCursor ?? undefined;
      } while (cursor);
    },
    page,
    cancel: async (id) => (await http.json<Job>(`${jobPath(id)}/cancel`, { method: 'POST' })).body,
    retry: (id, options = {}) => createJobs<JobAccepted>(`${jobPath(id)}/retry`, undefined, options),
    delete: async (id) => (await http.json<JobTombstone>(jobPath(id), { method: 'DELETE' })).body,
    bulkCancel: async (filter, options = {}) =>
      (await http.json<BulkJobActionResult>('/v1/jobs/bulk-cancel', { method: 'POST', body: { filter, ...options } })).body,
    bulkRetry: (filter, { idempotencyKey, submitRetry: retry, signal, ...options } = {}) =>
      createJobs<BulkJobActionResult>(
        '/v1/jobs/bulk-retry',
        { filter, ...options },
        { idempotencyKey, submitRetry: retry, signal },
        (options.limit ?? 1000) * 10,
      ),
    async readOutput<D extends DataType = DataType>(job: Job, name: string, datatype?: D): Promise<TypedArrayOf[D]> {
      const index = job.outputs?.findIndex((o) => o.name === name) ?? -1;
      const output = job.outputs?.[index];
      if (!output) throw new TypeError(`job ${job.id} has no output ${name}${job.outputs ? '' : ' (it has not succeeded)'}`);
      if (output.data !== undefined) return outputArray(output, datatype);
      if (datatype !== undefined && output.datatype !== datatype) throw new TypeError(`output ${name} is ${output.datatype}, not ${datatype}`);
      return typedArrayFromBytes(output.datatype as D, await download(job, index));
    },
  };
}

/** The per-call thresholds that are set (undefined ones keep the client's). */
const definedThresholds = (options: SubmitOptions): Partial<TransferThresholds> => ({
  ...(options.binaryThresholdBytes !== undefined && { binaryThresholdBytes: options.binaryThresholdBytes }),
  ...(options.uploadThresholdBytes !== undefined && { uploadThresholdBytes: options.uploadThresholdBytes }),
});
