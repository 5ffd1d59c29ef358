import { JOB_STATUSES, isTerminalStatus, type JobStatus } from '@inferq/contracts';

export interface RunJob {
  status: JobStatus;
  batchSize: number | null;
}

export interface RunSummary {
  byStatus: Record<JobStatus, number>;
  finished: number;
  /** [batch size, jobs that ran in a batch of that size], smallest size first. */
  batchSizes: Array<[size: number, jobs: number]>;
}

/** Status counts and the batch sizes a set of jobs ran in. */
export function summarizeRun(jobs: readonly RunJob[]): RunSummary {
  const byStatus = Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;
  const sizes = new Map<number, number>();
  let finished = 0;
  for (const job of jobs) {
    byStatus[job.status]++;
    if (isTerminalStatus(job.status)) finished++;
    if (job.batchSize !== null) sizes.set(job.batchSize, (sizes.get(job.batchSize) ?? 0) + 1);
  }
  return { byStatus, finished, batchSizes: [...sizes].sort((a, b) => a[0] - b[0]) };
}
