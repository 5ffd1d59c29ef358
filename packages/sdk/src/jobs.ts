import type { DataType, Job, JobAccepted, JobList, ListJobsQuery, SubmitJobBody } from '@inferq/contracts';
import type { HttpClient } from './http.ts';
import { typedArrayFromBytes, outputArray, type TypedArrayOf } from './tensors.ts';
import { waitForJob, type WaitOptions } from './wait-for-job.ts';

/** A job as the list shows it: no outputs. */
export type JobSummary = JobList['items'][number];
export type JobsQuery = Omit<ListJobsQuery, 'cursor'>;
export type OutputEncoding = 'json' | 'base64';

export interface SubmitOptions {
  /** Makes the submit safe to retry: the same key and body return the same job. */
  idempotencyKey?: string;
  /** Seconds to hold the reply for the result (`Prefer: wait=N`); the server caps it (WAIT_MAX_S). */
  wait?: number;
  signal?: AbortSignal;
}

/** What `submit` answers: the accepted job, or with `wait` the finished job when it ended in time. */
export type SubmitResult = JobAccepted | Job;

/** True when a submit with `wait` came back with the finished job (outputs included). */
export const isFinishedJob = (result: SubmitResult): result is Job => 'model' in result;

export interface JobsApi {
  submit(body: SubmitJobBody, options?: SubmitOptions & { wait?: undefined }): Promise<JobAccepted>;
  submit(body: SubmitJobBody, options: SubmitOptions): Promise<SubmitResult>;
  get(id: string, options?: { encoding?: OutputEncoding; signal?: AbortSignal }): Promise<Job>;
  /** Polls with backoff until the job is succeeded, failed, canceled or expired. */
  wait(id: string, options: WaitOptions): Promise<Job>;
  /** Every job matching the query, newest first, fetching pages (`limit` each) as it goes. */
  list(query?: JobsQuery): AsyncIterableIterator<JobSummary>;
  /** One page; pass `nextCursor` back as `cursor` for the next. */
  page(query?: ListJobsQuery): Promise<JobList>;
  cancel(id: string): Promise<Job>;
  /** A new job with the same model version, inputs and metadata. */
  retry(id: string): Promise<JobAccepted>;
  /** One output as a typed array: inline data decoded, or the raw bytes downloaded when the output is large. */
  readOutput<D extends DataType = DataType>(job: Job, name: string, datatype?: D): Promise<TypedArrayOf[D]>;
}

const jobPath = (id: string) => `/v1/jobs/${encodeURIComponent(id)}`;

export function createJobsApi(http: HttpClient): JobsApi {
  const get: JobsApi['get'] = async (id, options = {}) =>
    (await http.json<Job>(jobPath(id), { query: { encoding: options.encoding }, signal: options.signal })).body;
  const page: JobsApi['page'] = async (query = {}) => (await http.json<JobList>('/v1/jobs', { query })).body;

  return {
    // One implementation behind both overloads: what comes back depends on the server's answer, not on the types.
    submit: (async (body: SubmitJobBody, options: SubmitOptions = {}): Promise<SubmitResult> => {
      const headers: Record<string, string> = {};
      if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
      if (options.wait !== undefined) headers.prefer = `wait=${Math.max(0, Math.round(options.wait))}`;
      return (await http.json<SubmitResult>('/v1/jobs', { method: 'POST', body, headers, signal: options.signal })).body;
    }) as JobsApi['submit'],
    get,
    wait: (id, options) => waitForJob((signal) => get(id, { encoding: options.encoding, signal }), id, options),
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
    retry: async (id) => (await http.json<JobAccepted>(`${jobPath(id)}/retry`, { method: 'POST' })).body,
    async readOutput<D extends DataType = DataType>(job: Job, name: string, datatype?: D): Promise<TypedArrayOf[D]> {
      const index = job.outputs?.findIndex((o) => o.name === name) ?? -1;
      const output = job.outputs?.[index];
      if (!output) throw new TypeError(`job ${job.id} has no output ${name}${job.outputs ? '' : ' (it has not succeeded)'}`);
      if (output.data !== undefined) return outputArray(output, datatype);
      if (datatype !== undefined && output.datatype !== datatype) throw new TypeError(`output ${name} is ${output.datatype}, not ${datatype}`);
      const response = await http.send(`${jobPath(job.id)}/outputs/${index}`);
      return typedArrayFromBytes(output.datatype as D, new Uint8Array(await response.arrayBuffer()));
    },
  };
}
