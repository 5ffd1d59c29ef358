export const JobStatus = {
  Queued: 'queued',
  Running: 'running',
  Succeeded: 'succeeded',
  Failed: 'failed',
  Canceled: 'canceled',
  Expired: 'expired',
} as const;
export type JobStatus = (typeof JobStatus)[keyof typeof JobStatus];
export const JOB_STATUSES = Object.values(JobStatus);

const TERMINAL: ReadonlySet<JobStatus> = new Set(['succeeded', 'failed', 'canceled', 'expired']);
export const isTerminalStatus = (status: JobStatus): boolean => TERMINAL.has(status);

/**
 * The queue's classes, most urgent first: each is served before the next. `batch` is bulk work below every
 * interactive class (the Batch API's lines): it does not age up, and a batch's completion window bounds its wait.
 */
export const Priority = { High: 'high', Normal: 'normal', Low: 'low', Batch: 'batch' } as const;
export type Priority = (typeof Priority)[keyof typeof Priority];
export const PRIORITIES = Object.values(Priority);

/** Why a job was purged to a tombstone: its retention ran out, or its owner (or an admin) deleted it. */
export const PurgeReason = { Retention: 'retention', Deleted: 'deleted' } as const;
export type PurgeReason = (typeof PurgeReason)[keyof typeof PurgeReason];
export const PURGE_REASONS = Object.values(PurgeReason);
