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
 * The running rows once a paused worker's writes have all landed: a statement it sent just before the signal may
 * still commit, and one still in the socket, not yet read by its backend, shows no activity at all (on a loaded box
 * its completion landed after a single idle check and the "paused mid-batch" worker held nothing). So the count must
 * hold still across two looks 100 ms apart with none of the worker's statements active.
 */
async function settledCount(pool: Pool, workerId?: string): Promise<number> {
  const idle = () =>
    waitFor(
      async () =>
        (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'inferq-worker' AND state = 'active'"))
          .rows[0]!.n === 0,
      { intervalMs: 5, what: "the paused worker's statements to finish" },
    );
  let last = -1;
  for (;;) {
    await idle();
    const n = await countJobs(pool, 'running', workerId);
    if (n === last) return n;
    last = n;
    await new Promise((r) => setTimeout(r, 100));
  }
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
      const held = await settledCount(pool, workerId);
      if (held === 0) resumeWorker(worker);
      return held;
    },
    { timeoutMs: 20_000, intervalMs: 1, what: 'the worker paused mid-batch' },
  );
}
