import { createPeriodicTask, type Logger } from '@inferq/core';
import { expireOverdueJobs, type Pool } from '@inferq/db';
import { isRedisOutageError, type JobProducer } from '@inferq/queue';

const PAGE = 1_000;

/**
 * Ends queued jobs whose deadline has passed, whether or not a worker is
 * there to see them, and removes their queue jobs (best effort: a worker
 * that still finds one skips the row, which is no longer queued). Safe on
 * several API replicas: each row is expired once (SKIP LOCKED).
 */
export function createDeadlineSweeper(deps: { pool: Pool; producer: JobProducer; logger: Logger; intervalMs: number }) {
  async function sweepOnce(): Promise<number> {
    let expired = 0;
    for (;;) {
      const jobs = await expireOverdueJobs(deps.pool, PAGE);
      expired += jobs.length;
      await Promise.all(jobs.map((j) => deps.producer.removeJob(j.modelName, j.id)));
      if (jobs.length < PAGE) break;
    }
    if (expired > 0) deps.logger.info({ expired }, 'jobs expired at their deadline');
    return expired;
  }

  return {
    sweepOnce,
    ...createPeriodicTask({ what: 'deadline sweep', intervalMs: deps.intervalMs, logger: deps.logger, run: sweepOnce, expected: isRedisOutageError }),
  };
}
