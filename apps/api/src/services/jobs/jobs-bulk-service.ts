import { createHash } from 'node:crypto';
import { AuditAction, isEmptyJobFilter, type BulkJobActionBody, type BulkJobActionResult, type JobStatus } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import { cancelQueuedJobsMatching, countJobsMatching, findJobIdsMatching, insertAuditEntries, type Pool } from '@inferq/db';
import type { JobProducer } from '@inferq/queue';
import { ownerFilter, type Principal } from '../keys/api-keys-service.ts';
import { auditEntry, type AuditActor } from '../keys/audit-service.ts';
import { removeCanceledJobs, toJobFilter, type JobsService } from './jobs-service.ts';

/** What a bulk retry re-submits: jobs that ended without a result. */
const RETRYABLE: readonly JobStatus[] = ['failed', 'canceled', 'expired'];
/** What a bulk cancel cancels: the single cancel's rule, queued only (a running job finishes). */
const CANCELABLE: readonly JobStatus[] = ['queued'];
/** Retries in flight at once: each reads the job, maybe copies its S3 inputs, and queues a new one. */
const RETRY_CONCURRENCY = 8;
const DEFAULT_LIMIT = 1000;

export interface JobsBulkService {
  /** Cancels the queued jobs matching the filter, up to the limit, in one statement; audited as `jobs:bulk-canceled`. */
  cancelMatching(body: BulkJobActionBody, principal: Principal, actor: AuditActor): Promise<BulkJobActionResult>;
  /**
   * Retries (as new jobs, through the single retry) the failed, canceled and expired jobs matching the filter; audited as
   * `jobs:bulk-retried`. Under an `idempotencyKey`, each job is retried once: a call sent again creates no second retry.
   */
  retryMatching(body: BulkJobActionBody, principal: Principal, actor: AuditActor, idempotencyKey?: string): Promise<BulkJobActionResult>;
}

export interface JobsBulkServiceDeps {
  pool: Pool;
  producer: JobProducer;
  jobs: JobsService;
  /** Told of each job a bulk retry skipped, and why. */
  logger: { warn(fields: object, message: string): void };
}

/** The single retry's key for one job of a bulk retry under `key`: a call sent again finds the jobs it created. */
const retryKey = (key: string, jobId: string) => `bulk-retry:${createHash('sha256').update(key).digest('hex')}:${jobId}`;

/** Runs `fn` over the items with at most `concurrency` in flight; true for each that resolved. */
async function settleEach<T>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<unknown>): Promise<boolean[]> {
  const settled: boolean[] = new Array<boolean>(items.length).fill(false);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const at = next++;
      settled[at] = await fn(items[at]!).then(
        () => true,
        () => false,
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
  return settled;
}

/** Bulk cancel and retry: one filter, a bound, a count of what was touched, one audit entry. */
export function createJobsBulkService(deps: JobsBulkServiceDeps): JobsBulkService {
  function prepare(body: BulkJobActionBody, principal: Principal) {
    if (isEmptyJobFilter(body.filter)) {
      throw new AppError('JOB_FILTER_EMPTY', 'name at least one filter field (a model, status, key, error code or time range)');
    }
    return { filter: toJobFilter(body.filter, ownerFilter(principal)), limit: body.limit ?? DEFAULT_LIMIT, dryRun: body.dryRun ?? false };
  }

  async function finish(
    action: AuditAction,
    body: BulkJobActionBody,
    actor: AuditActor,
    counts: { matched: number; touched: number; limit: number },
  ): Promise<BulkJobActionResult> {
    const result = {
      matched: counts.matched,
      touched: counts.touched,
      skipped: Math.max(0, Math.min(counts.matched, counts.limit) - counts.touched),
      truncated: counts.matched > counts.limit,
      dryRun: false,
    };
    const { dryRun: _, ...audited } = result;
    await insertAuditEntries(deps.pool, [auditEntry(actor, action, 'jobs', { filter: body.filter, limit: counts.limit, ...audited })]);
    return result;
  }

  const dryRunResult = (matched: number, limit: number): BulkJobActionResult => ({ matched, touched: 0, skipped: 0, truncated: matched > limit, dryRun: true });

  return {
    async cancelMatching(body, principal, actor) {
      const { filter, limit, dryRun } = prepare(body, principal);
      if (dryRun) return dryRunResult(await countJobsMatching(deps.pool, filter, CANCELABLE), limit);
      const { matched, jobs } = await cancelQueuedJobsMatching(deps.pool, filter, limit);
      deps.jobs.forgetJobs(jobs.map((j) => j.id));
      await removeCanceledJobs(deps.producer, jobs);
      return finish(AuditAction.JobsBulkCanceled, body, actor, { matched, touched: jobs.length, limit });
    },
    async retryMatching(body, principal, actor, idempotencyKey) {
      const { filter, limit, dryRun } = prepare(body, principal);
      if (dryRun) return dryRunResult(await countJobsMatching(deps.pool, filter, RETRYABLE), limit);
      const { matched, jobs: ids } = await findJobIdsMatching(deps.pool, filter, RETRYABLE, limit);
      const settled = await settleEach(ids, RETRY_CONCURRENCY, (id) =>
        deps.jobs.retryJob(id, principal, idempotencyKey === undefined ? undefined : retryKey(idempotencyKey, id)).catch((err: unknown) => {
          deps.logger.warn({ err, jobId: id }, 'bulk retry skipped a job');
          throw err;
        }),
      );
      return finish(AuditAction.JobsBulkRetried, body, actor, { matched, touched: settled.filter(Boolean).length, limit });
    },
  };
}
