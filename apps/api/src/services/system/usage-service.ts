import type { Batch, Usage, UsageQuery } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import { findBatch, readUsage, type Pool } from '@inferq/db';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Batch provenance and device-time accounting, read straight from Postgres. */
export function createUsageService(pool: Pool) {
  return {
    /** A batch a worker ran, with its jobs; NOT_FOUND when no batch has the id. */
    async findBatch(id: string): Promise<Batch> {
      const batch = await findBatch(pool, id);
      if (!batch) throw new AppError('NOT_FOUND', `batch ${id} does not exist`);
      return batch;
    },

    /**
     * Device time over [from, to), per key or per model version; `ownerKeyId` (ownerFilter) limits it to one key's
     * jobs. Without `to` the window ends now, without `from` it is the day before `to`.
     */
    async readUsage(query: UsageQuery, ownerKeyId: string | null): Promise<Usage> {
      const to = query.to ? new Date(query.to) : new Date();
      const from = query.from ? new Date(query.from) : new Date(to.getTime() - DAY_MS);
      if (!(from < to)) {
        throw new AppError('VALIDATION_FAILED', '`from` must be before `to`', {
          errors: [{ pointer: '/querystring/from', code: 'VALIDATION_FAILED', detail: 'must be before to' }],
        });
      }
      const groupBy = query.groupBy ?? 'key';
      const usage = await readUsage(pool, { from, to, groupBy, ownerKeyId });
      return { from: from.toISOString(), to: to.toISOString(), groupBy, ...usage };
    },
  };
}
export type UsageService = ReturnType<typeof createUsageService>;
