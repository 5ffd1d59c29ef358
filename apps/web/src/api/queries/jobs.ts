import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { isTerminalStatus, type Job, type JobList } from '@inferq/contracts';
import { toListJobsQuery, type JobFilters } from '../../lib/job-filters.ts';
import { apiFetch } from '../client.ts';
import { queryKeys } from '../query-keys.ts';

export type JobSummary = JobList['items'][number];

export const JOBS_PAGE_SIZE = 25;
/** How often an unfinished job is polled. */
const JOB_POLL_MS = 1000;

const jobListOptions = (filters: JobFilters, cursor: string | undefined) =>
  queryOptions({
    queryKey: queryKeys.jobs.list(filters, cursor),
    // Relative ranges ("last hour") are measured at fetch time, so each refetch slides the window.
    queryFn: ({ signal }) =>
      apiFetch<JobList>('/v1/jobs', { query: { ...toListJobsQuery(filters, Date.now()), limit: JOBS_PAGE_SIZE, cursor }, signal }),
    placeholderData: keepPreviousData,
    refetchInterval: 5000,
  });

const jobDetailOptions = (id: string) =>
  queryOptions({
    queryKey: queryKeys.jobs.detail(id),
    queryFn: ({ signal }) => apiFetch<Job>(`/v1/jobs/${encodeURIComponent(id)}`, { signal }),
    refetchInterval: (query) => (query.state.data && isTerminalStatus(query.state.data.status) ? false : JOB_POLL_MS),
  });

const RUN_PAGE_SIZE = 500;
const RUN_MAX_PAGES = 4;

/**
 * The current state of a set of jobs of one model (a "Submit 100" run), read
 * from the newest pages of the job list rather than one request per job.
 */
async function fetchRunJobs(model: string, ids: readonly string[], signal: AbortSignal): Promise<JobSummary[]> {
  const wanted = new Set(ids);
  const found: JobSummary[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < RUN_MAX_PAGES && found.length < wanted.size; page++) {
    const list = await apiFetch<JobList>('/v1/jobs', { query: { model, limit: RUN_PAGE_SIZE, cursor }, signal });
    found.push(...list.items.filter((job) => wanted.has(job.id)));
    if (!list.nextCursor) break;
    cursor = list.nextCursor;
  }
  return found;
}

const jobRunOptions = (model: string, ids: readonly string[]) =>
  queryOptions({
    queryKey: queryKeys.jobs.run(model, ids),
    queryFn: ({ signal }) => fetchRunJobs(model, ids, signal),
    enabled: ids.length > 0,
    placeholderData: keepPreviousData,
    refetchInterval: (query) => {
      const jobs = query.state.data;
      const done = jobs !== undefined && jobs.length === ids.length && jobs.every((job) => isTerminalStatus(job.status));
      return done ? false : JOB_POLL_MS;
    },
  });

export const useJobList = (filters: JobFilters, cursor: string | undefined) => useQuery(jobListOptions(filters, cursor));
export const useJob = (id: string) => useQuery(jobDetailOptions(id));
export const useJobRun = (model: string, ids: readonly string[]) => useQuery(jobRunOptions(model, ids));
