import type { JobOutcome } from './batch-outcome.ts';
import type { InferenceProfiles } from './inference-profiles.ts';
import { itemsOf, type LoadedJob } from './pending-job.ts';

/**
 * With deadline-aware scheduling (DEADLINE_SCHEDULING): the jobs that would finish after their deadline if the batch
 * ran now, by the model's measured inference time for a batch this size (none before its first run), as expired
 * outcomes, so they do not take the device; and the rest, which run.
 */
export function splitLateJobs(jobs: LoadedJob[], profiles: InferenceProfiles, deadlines: boolean): { onTime: LoadedJob[]; late: JobOutcome[] } {
  if (!deadlines || !jobs.some((j) => j.deadlineAt !== undefined)) return { onTime: jobs, late: [] };
  const expectedMs = profiles.of(jobs[0]!.model).expectedMs(jobs.reduce((n, j) => n + itemsOf(j), 0));
  if (expectedMs === undefined) return { onTime: jobs, late: [] };
  const done = Date.now() + expectedMs;
  const isLate = (j: LoadedJob): boolean => j.deadlineAt !== undefined && done > j.deadlineAt;
  const message = `cannot finish by its deadline: the batch is expected to take ${expectedMs.toFixed(1)} ms`;
  return {
    onTime: jobs.filter((j) => !isLate(j)),
    late: jobs.filter(isLate).map((job) => ({ kind: 'expired', job, message })),
  };
}
