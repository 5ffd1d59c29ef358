import { createPeriodicTask, type Logger } from '@inferq/core';
import {
  deleteAuditEntriesBefore,
  deleteBatchesCreatedBefore,
  deleteLostJobsBefore,
  dropExpiredJobPartitions,
  ensureJobPartitions,
  jobPartitionDay,
  tuneJobPartitions,
  utcDayStart,
  type ChunkedDeleteOptions,
  type DropJobPartitionsResult,
  type Pool,
} from '@inferq/db';
import { isRedisOutageError, withLease, type RedisClient } from '@inferq/queue';

/** The name of the pass's lease: one API replica creates partitions at a time. */
const PARTITION_PASS = 'job-partitions';
/** How often the days ahead are checked: a missed hour (Postgres down, a lock not granted) is caught well before a day runs out. */
const INTERVAL_MS = 3_600_000;
const LEASE_MS = 5 * 60_000;
/** JOB_TOMBSTONE_RETENTION_S's and AUDIT_RETENTION_S's default (config.ts). */
const DEFAULT_TOMBSTONE_RETENTION_S = 400 * 86_400;
const DEFAULT_AUDIT_RETENTION_S = 400 * 86_400;
/** Batches are kept this much longer than the days dropped: a batch's jobs got their ids on an API's clock, its created_at on Postgres's. */
const BATCH_MARGIN_MS = 3_600_000;
/** The tables whose rows the maintainer deletes past their retention. */
type RetainedTable = 'batches' | 'audit_log' | 'lost_jobs';
const DELETE_BEFORE = { batches: deleteBatchesCreatedBefore, audit_log: deleteAuditEntriesBefore, lost_jobs: deleteLostJobsBefore } as const;

export interface PartitionMaintainerDeps {
  pool: Pool;
  redis: RedisClient;
  /** The queue prefix the lease key lives under. */
  prefix: string;
  logger: Logger;
  /** JOB_PARTITIONS_AHEAD_DAYS: days past today (UTC) whose partitions of jobs must exist. */
  aheadDays: number;
  /** JOB_TOMBSTONE_RETENTION_S: a day's partition is dropped once its whole day is this far in the past. @default 400 days */
  tombstoneRetentionS?: number;
  /** AUDIT_RETENTION_S: audit entries older than this are deleted. @default 400 days */
  auditRetentionS?: number;
  /** Counts the partitions dropped (the metric inferq_job_partitions_dropped_total). */
  onDropped?: (count: number) => void;
  /** Counts the rows of batches, audit_log and lost_jobs deleted past their retention (inferq_retention_rows_deleted_total). */
  onRowsDeleted?: (table: RetainedTable, count: number) => void;
  /** Bounds each pass's deletes. @default 10,000 rows a statement, 100 statements a table */
  deleteChunks?: ChunkedDeleteOptions;
  /** @default 3_600_000 */
  intervalMs?: number;
}

/**
 * Keeps the daily partitions of jobs created ahead (migration 0018): a job
 * whose day has no partition cannot be inserted. `ensureNow` runs at start on
 * every replica (without the lease: ensureJobPartitions is safe concurrently);
 * then every hour on one replica at a time (a lease in Redis), each pass
 * followed by `dropExpired`: the daily partitions past the tombstone retention
 * are dropped (dropExpiredJobPartitions), then the batches of those days, the
 * audit entries past AUDIT_RETENTION_S and the lost jobs' records (lost_jobs)
 * past the tombstone retention, in bounded chunks.
 */
export function createPartitionMaintainer(deps: PartitionMaintainerDeps) {
  async function ensureNow(): Promise<string[]> {
    const created = await ensureJobPartitions(deps.pool, { aheadDays: deps.aheadDays });
    if (created.length > 0) deps.logger.info({ created, aheadDays: deps.aheadDays }, 'job partitions created');
    return created;
  }

  async function dropExpired(now = new Date()): Promise<DropJobPartitionsResult> {
    const retentionS = deps.tombstoneRetentionS ?? DEFAULT_TOMBSTONE_RETENTION_S;
    const olderThan = new Date(now.getTime() - retentionS * 1000);
    const result = await dropExpiredJobPartitions(deps.pool, { olderThan });
    if (result.dropped.length > 0) {
      deps.onDropped?.(result.dropped.length);
      deps.logger.info({ dropped: result.dropped, olderThan: olderThan.toISOString(), retentionS }, 'job partitions dropped');
    }
    if (result.skipped.length > 0) deps.logger.warn({ skipped: result.skipped, olderThan: olderThan.toISOString() }, 'job partitions past retention kept');
    return result;
  }

  /** Sets the autovacuum parameters on partitions that lack them (tuneJobPartitions). */
  async function tune(): Promise<string[]> {
    const tuned = await tuneJobPartitions(deps.pool);
    if (tuned.length > 0) deps.logger.info({ tuned }, 'job partitions given their storage parameters');
    return tuned;
  }

  async function deleteRows(table: RetainedTable, before: Date): Promise<number> {
    const start = performance.now();
    const deleted = await DELETE_BEFORE[table](deps.pool, before, deps.deleteChunks);
    if (deleted > 0) {
      deps.onRowsDeleted?.(table, deleted);
      deps.logger.info({ table, deleted, before: before.toISOString(), ms: Math.round(performance.now() - start) }, 'rows past retention deleted');
    }
    return deleted;
  }

  /**
   * Deletes the batches no stored tombstone can name any more: those recorded
   * before the start of the oldest day still kept (the day of now − the
   * tombstone retention, or an older day the drop skipped), less a margin.
   * A job is always created before its batch is recorded.
   */
  async function deleteBatches(drop: DropJobPartitionsResult, now = new Date()): Promise<number> {
    const retentionS = deps.tombstoneRetentionS ?? DEFAULT_TOMBSTONE_RETENTION_S;
    const kept = [utcDayStart(new Date(now.getTime() - retentionS * 1000)), ...drop.skipped.map((s) => jobPartitionDay(s.name))];
    const oldest = Math.min(...kept.map((d) => d.getTime()).filter((t) => !Number.isNaN(t)));
    return deleteRows('batches', new Date(oldest - BATCH_MARGIN_MS));
  }

  async function deleteAuditEntries(now = new Date()): Promise<number> {
    return deleteRows('audit_log', new Date(now.getTime() - (deps.auditRetentionS ?? DEFAULT_AUDIT_RETENTION_S) * 1000));
  }

  /** Deletes the records of lost jobs (lost_jobs) older than the tombstone retention: a poll of one then answers 404, as a dropped day's job does. */
  async function deleteLostJobs(now = new Date()): Promise<number> {
    return deleteRows('lost_jobs', new Date(now.getTime() - (deps.tombstoneRetentionS ?? DEFAULT_TOMBSTONE_RETENTION_S) * 1000));
  }

  /**
   * One pass (returns the partitions created); undefined when another replica holds it. After ensuring: the
   * storage parameters, the drop, the batches of the days dropped (only after a drop that did not fail), the
   * audit entries past AUDIT_RETENTION_S and the lost jobs past the tombstone retention. Each failure is logged, not thrown.
   */
  async function runOnce(): Promise<string[] | undefined> {
    return withLease(deps.redis, deps.prefix, PARTITION_PASS, LEASE_MS, async () => {
      const created = await ensureNow();
      const fail = (what: string) => (err: Error) => void deps.logger.error({ err: err.message }, `${what} failed`);
      await tune().catch(fail('setting the storage parameters of job partitions'));
      const drop = await dropExpired().catch(fail('dropping job partitions'));
      if (drop) await deleteBatches(drop).catch(fail('deleting old batches'));
      await deleteAuditEntries().catch(fail('deleting old audit entries'));
      await deleteLostJobs().catch(fail('deleting old records of lost jobs'));
      return created;
    });
  }

  return {
    ensureNow,
    tune,
    dropExpired,
    deleteBatches,
    deleteAuditEntries,
    deleteLostJobs,
    runOnce,
    ...createPeriodicTask({
      what: 'maintaining job partitions',
      intervalMs: deps.intervalMs ?? INTERVAL_MS,
      logger: deps.logger,
      run: runOnce,
      expected: isRedisOutageError,
    }),
  };
}
