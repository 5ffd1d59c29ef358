import type { BatchRun } from '@inferq/db';

/** A batch run for tests that play the worker (completeJobs, markJobsRunning, expireRunningJobs): just claimed, one job unless `batchSize`. */
export const testBatchRun = (batchId: string, workerId = 'w-test', batchSize = 1): BatchRun => ({ batchId, workerId, batchSize, ranMs: 0 });
