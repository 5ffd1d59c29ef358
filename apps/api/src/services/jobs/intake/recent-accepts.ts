import { findJobsWithoutRow, recordLostJobs, type LostJob, type Pool } from '@inferq/db';

/**
 * The jobs this API accepted lately, checked against the record after a Postgres failover. With asynchronous
 * replication a failover drops the last commits the old primary acknowledged: a job the API answered 202 for may
 * have no row on the new primary. A worker finds those whose queue entries still wait (the worker's batch-claim.ts, recordLost);
 * this finds the rest, jobs that ran and finished on the lost timeline, whose entries are gone. Each is recorded in
 * lost_jobs, so its poll answers 410 JOB_LOST rather than 404 (invariant 12: what is lost is said).
 *
 * Memory is bounded by time and count: replication lag at a failover is milliseconds to seconds, so the last
 * `windowMs` of accepts (at most `maxJobs`) cover what a failover can lose. A process that restarted since the
 * accept, or a burst past `maxJobs` in the window, leaves those to the workers' check alone.
 */
export interface RecentAccepts {
  /** Jobs just accepted (202). */
  note(jobs: readonly LostJob[]): void;
  /** Checks every job noted in the window against the record; records and returns those with no row. */
  recheck(): Promise<LostJob[]>;
}

/** Ids a statement checks: a claim's size, pruned to their days like one. */
const CHECK_CHUNK = 1_000;

export function createRecentAccepts(deps: { pool: Pool; windowMs?: number; maxJobs?: number; now?: () => number }): RecentAccepts {
  const windowMs = deps.windowMs ?? 120_000;
  const maxJobs = deps.maxJobs ?? 200_000;
  const now = deps.now ?? Date.now;
  // Oldest first; `head` is the first live entry (the array is compacted when half of it is dead).
  let entries: Array<{ job: LostJob; at: number }> = [];
  let head = 0;

  const prune = () => {
    const oldest = now() - windowMs;
    while (head < entries.length && (entries[head]!.at < oldest || entries.length - head > maxJobs)) head++;
    if (head > entries.length / 2) {
      entries = entries.slice(head);
      head = 0;
    }
  };

  return {
    note(jobs) {
      const at = now();
      for (const job of jobs) entries.push({ job, at });
      prune();
    },
    async recheck() {
      prune();
      const noted = entries.slice(head).map((e) => e.job);
      const lost: LostJob[] = [];
      for (let i = 0; i < noted.length; i += CHECK_CHUNK) {
        const chunk = noted.slice(i, i + CHECK_CHUNK);
        const missing = new Set(
          await findJobsWithoutRow(
            deps.pool,
            chunk.map((j) => j.id),
          ),
        );
        lost.push(...chunk.filter((j) => missing.has(j.id)));
      }
      const recorded = await recordLostJobs(deps.pool, lost);
      return lost.filter((j) => recorded.has(j.id));
    },
  };
}

/**
 * After a failover: the jobs accepted lately that the new primary does not have are recorded as lost, counted and said
 * once. Never rejects: a check that fails is logged, and the workers still find the lost jobs whose entries wait.
 */
export async function checkAcceptsAfterFailover(
  recent: RecentAccepts,
  o: { logger: { warn(fields: object, message: string): void; info(fields: object, message: string): void }; onLost(model: string, count: number): void },
): Promise<void> {
  try {
    const lost = await recent.recheck();
    if (lost.length === 0) return o.logger.info({}, 'postgres failover: every job accepted lately is on the new primary');
    const byModel = new Map<string, number>();
    for (const job of lost) byModel.set(job.model, (byModel.get(job.model) ?? 0) + 1);
    for (const [model, count] of byModel) o.onLost(model, count);
    o.logger.warn(
      { jobIds: lost.map((j) => j.id), lost: lost.length },
      'postgres failover lost accepted jobs (the new primary had not received their last commits: asynchronous replication); ' +
        'recorded as lost, clients polling them get 410 JOB_LOST',
    );
  } catch (err) {
    o.logger.warn({ err }, 'postgres failover: could not check the jobs accepted lately against the new primary');
  }
}
