import type { Pool } from '@inferq/db';
import type { TestProcess } from './processes.ts';
import { waitFor } from './wait-for.ts';

// A worker frozen with SIGSTOP holds what it holds and takes nothing new, so a
// fault test can line a fault up with a known state; SIGCONT resumes it.

const countJobs = async (pool: Pool, status: string, workerId?: string): Promise<number> =>
  (
    await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs WHERE status = $1 AND ($2::text IS NULL OR worker_id = $2)', [
      status,
      workerId ?? null,
    ])
  ).rows[0]!.n;

export const resumeWorker = (worker: TestProcess): void => {
  worker.child.kill('SIGCONT');
};

/** Jobs not yet claimed, as Postgres sees them: those the worker holds unclaimed included. */
export const queuedInPostgres = (pool: Pool) => (): Promise<number> => countJobs(pool, 'queued');

/**
 * Pauses the worker until `count` (e.g. `queuedInPostgres`, or a queue's own
 * backlog when the jobs must be in Redis, not prefetched by the worker) reaches
 * `jobs` while a load submits; returns the count.
 */
export async function pauseWorkerForBacklog(worker: TestProcess, count: () => Promise<number>, jobs: number): Promise<number> {
  worker.child.kill('SIGSTOP');
  return waitFor(
    async () => {
      const n = await count();
      return n >= jobs ? n : undefined;
    },
    { timeoutMs: 10_000, what: `${jobs} jobs queued behind the paused worker` },
  );
}

/**
 * Pauses the worker between a batch's claim and its result write: once its
 * statements in flight have finished, some rows are still `running`. Returns
 * how many. Tries again while the batches are too quick to catch. With
 * `workerId` (other workers run beside it), only rows this worker claimed count.
 */
export async function pauseWorkerMidBatch(worker: TestProcess, pool: Pool, workerId?: string): Promise<number> {
  return waitFor(
    async () => {
      if ((await countJobs(pool, 'running', workerId)) === 0) return 0;
      worker.child.kill('SIGSTOP');
      // A write sent just before the signal may still commit.
      await waitFor(
        async () =>
          (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'inferq-worker' AND state = 'active'"))
            .rows[0]!.n === 0,
        { intervalMs: 5, what: "the paused worker's statements to finish" },
      );
      const held = await countJobs(pool, 'running', workerId);
      if (held === 0) resumeWorker(worker);
      return held;
    },
    { timeoutMs: 20_000, intervalMs: 1, what: 'the worker paused mid-batch' },
  );
}
