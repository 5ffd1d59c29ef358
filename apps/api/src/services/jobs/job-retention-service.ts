import { AuditAction, type PurgeReason } from '@inferq/contracts';
import { AppError, type Logger } from '@inferq/core';
import { dropInputs, insertAuditEntries, purgeJobs, type JobRecord, type Pool, type PurgeResult } from '@inferq/db';
import { inputSegmentKey, type Storage } from '@inferq/storage';
import { ownerFilter, type Principal } from '../keys/api-keys-service.ts';
import { auditEntry, type AuditActor } from '../keys/audit-service.ts';
import type { JobsService } from './jobs-service.ts';

/** What a running job's DELETE tells the client to wait before trying again. */
const RUNNING_RETRY_AFTER_S = 5;

export interface JobRetentionDeps {
  pool: Pool;
  storage: Pick<Storage, 'deleteObjects'>;
  jobs: Pick<JobsService, 'findJobRow' | 'cancelJob' | 'forgetJobs'>;
  logger: Pick<Logger, 'info' | 'error'>;
  /** Told how many jobs were purged (by reason) and how many jobs' inputs were dropped. */
  onPurged?(reason: PurgeReason, count: number): void;
  onInputsDropped?(count: number): void;
}

export interface JobRetention {
  /** Purges finished jobs to tombstones, then deletes the S3 objects no row references any more. */
  purge(ids: string[], reason: PurgeReason, options?: { skipLocked?: boolean }): Promise<PurgeResult>;
  /** Drops finished jobs' inputs, then deletes their S3 objects no row references any more. */
  dropInputs(ids: string[], options?: { skipLocked?: boolean }): Promise<PurgeResult>;
  /**
   * DELETE /v1/jobs/:id: a queued job is canceled first (the single cancel
   * path, which removes its queue job), a running one is refused with 409
   * JOB_RUNNING and Retry-After; then the job is purged now and audited as
   * `job:deleted`. Deleting a tombstone again answers it as it is.
   */
  deleteJob(id: string, principal: Principal, actor: AuditActor): Promise<JobRecord>;
}

export function createJobRetention(deps: JobRetentionDeps): JobRetention {
  /**
   * The objects and segments no row references after the rows changed: one a failed delete leaves is a leak the orphan
   * sweep and the bucket lifecycle catch, never a dangling key.
   */
  async function deleteObjects({ keys: objects, segments }: PurgeResult, what: string): Promise<void> {
    const keys = [...objects, ...segments.map(inputSegmentKey)];
    if (keys.length === 0) return;
    await deps.storage.deleteObjects(keys).catch((err: unknown) => {
      deps.logger.error({ err, keys: keys.length, firstKey: keys[0], what }, 'job objects could not be deleted');
    });
  }

  async function purge(ids: string[], reason: PurgeReason, options: { skipLocked?: boolean } = {}): Promise<PurgeResult> {
    const result = await purgeJobs(deps.pool, ids, reason, options);
    deps.jobs.forgetJobs(result.ids);
    await deleteObjects(result, 'purge');
    if (result.ids.length > 0) deps.onPurged?.(reason, result.ids.length);
    return result;
  }

  return {
    purge,
    async dropInputs(ids, options = {}) {
      const result = await dropInputs(deps.pool, ids, options);
      deps.jobs.forgetJobs(result.ids);
      await deleteObjects(result, 'inputs');
      if (result.ids.length > 0) deps.onInputsDropped?.(result.ids.length);
      return result;
    },
    async deleteJob(id, principal, actor) {
      const owner = ownerFilter(principal);
      let job = await deps.jobs.findJobRow(id, owner);
      if (job.purgedAt) return job;
      if (job.status === 'queued') {
        job = await deps.jobs.cancelJob(id, owner).catch(async (err: unknown) => {
          // A worker claimed it between the read and the cancel.
          if (err instanceof AppError && err.code === 'JOB_NOT_CANCELABLE') return deps.jobs.findJobRow(id, owner);
          throw err;
        });
      }
      if (job.status === 'queued' || job.status === 'running') {
        throw new AppError('JOB_RUNNING', `job ${id} is running; delete it once it has finished`, {
          headers: { 'retry-after': String(RUNNING_RETRY_AFTER_S) },
        });
      }
      const result = await purge([id], 'deleted');
      if (result.ids.length > 0) {
        await insertAuditEntries(deps.pool, [
          auditEntry(actor, AuditAction.JobDeleted, `jobs/${id}`, {
            ownerKeyId: job.ownerKeyId,
            model: job.modelName,
            status: job.status,
            objectsDeleted: result.keys.length,
          }),
        ]);
        deps.logger.info({ jobId: id, objectsDeleted: result.keys.length }, 'job deleted');
      }
      return deps.jobs.findJobRow(id, owner);
    },
  };
}
