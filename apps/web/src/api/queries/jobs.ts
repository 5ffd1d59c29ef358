import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import type { Job } from '@inferq/contracts';
import { isTerminalStatus, type JobSummary } from '@inferq/sdk';
import { toListJobsQuery, type JobFilters } from '../../lib/job-filters.ts';
import { pollUntil } from '../poll-until.ts';
import { queryKeys } from '../query-keys.ts';
import { inferq } from '../sdk-client.ts';

export const JOBS_PAGE_SIZE = 25;
/** How often an unfinished job is polled. */
const JOB_POLL_MS = 1000;

const jobListOptions = (filters: JobFilters, cursor: string | undefined) =>
  queryOptions({
    queryKey: queryKeys.jobs.list(filters, cursor),
    // Relative ranges ("last hour") are measured at fetch time, so each refetch slides the window.
    queryFn: () => inferq().jobs.page({ ...toListJobsQuery(filters, Date.now()), limit: JOBS_PAGE_SIZE, cursor }),
    placeholderData: keepPreviousData,
    refetchInterval: 5000,
  });

const jobDetailOptions = (id: string) =>
  queryOptions({
    queryKey: queryKeys.jobs.detail(id),
    queryFn: ({ signal }) => inferq().jobs.get(id, { signal }),
    refetchInterval: pollUntil((job: Job) => isTerminalStatus(job.status), JOB_POLL_MS),
  });

const RUN_PAGE_SIZE = 500;
const RUN_MAX_PAGES = 4;

/**
 * The current state of a set of jobs of one model (a "Submit 100" run), read
 * from the newest pages of the job list rather than one request per job.
 */
async function fetchRunJobs(model: string, ids: readonly string[]): Promise<JobSummary[]> {
  const wanted = new Set(ids);
  const found: JobSummary[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < RUN_MAX_PAGES && found.length < wanted.size; page++) {
    const list = await inferq().jobs.page({ model, limit: RUN_PAGE_SIZE, cursor });
    found.push(...list.items.filter((job) => wanted.has(job.id)));
    if (!list.nextCursor) break;
    cursor = list.nextCursor;
  }
  return found;
}

const jobRunOptions = (model: string, ids: readonly string[]) =>
  queryOptions({
    queryKey: queryKeys.jobs.run(model, ids),
    queryFn: () => fetchRunJobs(model, ids),
    enabled: ids.length > 0,
    placeholderData: keepPreviousData,
    refetchInterval: pollUntil((jobs: JobSummary[]) => jobs.length === ids.length && jobs.every((job) => isTerminalStatus(job.status)), JOB_POLL_MS),
  });

export const useJobList = (filters: JobFilters, cursor: string | undefined) => useQuery(jobListOptions(filters, cursor));
export const useJob = (id: string) => useQuery(jobDetailOptions(id));
export const useJobRun = (model: string, ids: readonly string[]) => useQuery(jobRunOptions(model, ids));
