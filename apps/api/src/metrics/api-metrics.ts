import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { PRIORITIES, type QueueDepth } from '@inferq/contracts';
import { createScrapeReads } from '@inferq/core';
import {
  boundTime,
  createPostgresOutageMetrics,
  listJobPartitionBounds,
  readActiveBulkBatches,
  readOldestQueuedAges,
  type BulkBatchRecord,
  type Pool,
} from '@inferq/db';
import { createRedisOutageMetrics, type JobProducer, type RedisClient } from '@inferq/queue';
import { readQueueOverview } from '../services/system/stats-service.ts';

/** Reads of the queues made for one scrape are reused by its gauges within this. */
const SCRAPE_REUSE_MS = 1_000;

/**
 * The API's Prometheus metrics: HTTP latency by route and status, jobs
 * submitted, response-cache hits and misses, and, read at scrape time, every model queue's depth, its
 * backlog (what KEDA scales workers on), its live workers, whether it is
 * paused and the age of its oldest queued job. What is read at scrape time goes through the scrape's time limit
 * (createScrapeReads): during a Redis or Postgres outage /metrics still answers at once, without the gauges it could not
 * read, and says which source failed (inferq_metrics_source_up).
 */
export function createApiMetrics(deps: { pool: Pool; producer: JobProducer; redis: RedisClient }) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'inferq_api_' });
  const scrape = createScrapeReads(registry, { sources: ['postgres', 'redis'] });

  const httpDuration = new Histogram({
    name: 'inferq_http_request_duration_seconds',
    help: 'HTTP requests by route template, method and status',
    labelNames: ['method', 'route', 'status_code'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  const submitted = new Counter({
    name: 'inferq_jobs_submitted_total',
    help: 'Jobs accepted (202) by model and priority',
    labelNames: ['model', 'priority'],
    registers: [registry],
  });
  const cacheLookups = new Counter({
    name: 'inferq_response_cache_lookups_total',
    help: 'Submissions to models with the response cache on, by result: hit (answered from a stored result) or miss (queued)',
    labelNames: ['model', 'result'],
    registers: [registry],
  });
  const inputSegments = new Counter({
    name: 'inferq_input_segments_total',
    help: 'Submit groups whose small inputs were written as one segment object (written), or kept in the job rows because it could not be (failed)',
    labelNames: ['outcome'],
    registers: [registry],
  });

  const jobViews = new Counter({
    name: 'inferq_job_views_total',
    help: 'Job views served (polls, waits, event streams), by source: memory (the job view cache) or postgres',
    labelNames: ['source'],
    registers: [registry],
  });

  const purged = new Counter({
    name: 'inferq_jobs_purged_total',
    help: 'Jobs purged to tombstones, by reason: retention (the sweep) or deleted (DELETE /v1/jobs/:id)',
    labelNames: ['reason'],
    registers: [registry],
  });
  const inputsDropped = new Counter({
    name: 'inferq_job_inputs_dropped_total',
    help: 'Finished jobs whose input tensors were dropped after the input retention (JOB_INPUT_RETENTION_S)',
    registers: [registry],
  });
  const orphansDeleted = new Counter({
    name: 'inferq_job_orphaned_objects_deleted_total',
    help: 'S3 job objects no row named, deleted by the orphan sweep (ORPHAN_SWEEP_INTERVAL_MS)',
    registers: [registry],
  });
  const partitionsDropped = new Counter({
    name: 'inferq_job_partitions_dropped_total',
    help: 'Daily partitions of jobs dropped after the tombstone retention (JOB_TOMBSTONE_RETENTION_S)',
    registers: [registry],
  });
  const retentionBehind = new Gauge({
    name: 'inferq_retention_sweep_behind',
    help: 'Whether the last retention sweep ran out of time with jobs still due (1): purges are falling behind the finish rate',
    registers: [registry],
  });
  const rowsDeleted = new Counter({
    name: 'inferq_retention_rows_deleted_total',
    help:
      'Rows deleted past their retention by the partition maintainer: batches of dropped days, audit_log past AUDIT_RETENTION_S, ' +
      'lost_jobs past JOB_TOMBSTONE_RETENTION_S',
    labelNames: ['table'] as const,
    registers: [registry],
  });

  const recordLost = new Counter({
    name: 'inferq_jobs_record_lost_total',
    help:
      'Accepted jobs the record lost, found by this API after a Postgres failover (jobs it accepted lately with no row on the new ' +
      'primary: an asynchronous standby promoted); polls of them answer 410 JOB_LOST',
    labelNames: ['model'],
    registers: [registry],
  });

  const uploads = new Counter({
    name: 'inferq_uploads_total',
    help: 'Uploads (POST /v1/uploads) by event: created, claimed (taken by a job), expired (deleted unused by the upload sweep)',
    labelNames: ['event'],
    registers: [registry],
  });

  let depths: { at: number; read: Promise<QueueDepth[]> } | undefined;
  const readDepths = (): Promise<QueueDepth[]> => {
    if (!depths || Date.now() - depths.at > SCRAPE_REUSE_MS) {
      depths = { at: Date.now(), read: readQueueOverview(deps, scrape.read).then((o) => o.queues) };
    }
    return depths.read;
  };

  scrape.gauge({
    name: 'inferq_queue_jobs',
    help: 'Jobs in each model queue: waiting per priority, active (held by a worker), delayed (retry backoff)',
    labelNames: ['model', 'state'],
    source: 'redis',
    async read(values) {
      for (const d of await readDepths()) for (const state of [...PRIORITIES, 'active', 'delayed'] as const) values.set({ model: d.model, state }, d[state]);
    },
  });
  scrape.gauge({
    name: 'inferq_queue_backlog',
    help: 'Jobs waiting to run per model (every priority, batch included, plus retry backoff): the worker autoscaling signal',
    labelNames: ['model'],
    source: 'redis',
    async read(values) {
      for (const d of await readDepths()) values.set({ model: d.model }, d.high + d.normal + d.low + d.batch + d.delayed);
    },
  });
  scrape.gauge({
    name: 'inferq_model_workers',
    help: 'Live worker processes consuming each model queue (from their heartbeats)',
    labelNames: ['model'],
    source: 'redis',
    async read(values) {
      for (const d of await readDepths()) values.set({ model: d.model }, d.workers);
    },
  });
  scrape.gauge({
    name: 'inferq_job_partitions_ahead_seconds',
    help: 'How far ahead of now the newest partition of jobs reaches: a job past it cannot be inserted (the API creates days ahead)',
    source: 'postgres',
    async read(values) {
      const ends = (await listJobPartitionBounds(deps.pool)).flatMap((p) => (p.to === null ? [] : [boundTime(p.to).getTime()]));
      if (ends.length > 0) values.set((Math.max(...ends) - Date.now()) / 1000);
    },
  });
  scrape.gauge({
    name: 'inferq_queue_paused',
    help: 'Whether each model queue is paused by an operator (1) or serving (0)',
    labelNames: ['model'],
    source: 'redis',
    async read(values) {
      for (const d of await readDepths()) values.set({ model: d.model }, d.paused ? 1 : 0);
    },
  });
  scrape.gauge({
    name: 'inferq_queue_oldest_job_age_seconds',
    help: 'Age of the oldest queued job per model and priority',
    labelNames: ['model', 'priority'],
    source: 'postgres',
    async read(values) {
      for (const a of await readOldestQueuedAges(deps.pool)) values.set({ model: a.model, priority: a.priority }, a.ageS);
    },
  });

  // Batch API batches not yet ended, read once a scrape for the three gauges below.
  let active: { at: number; read: Promise<BulkBatchRecord[]> } | undefined;
  const readActive = (): Promise<BulkBatchRecord[]> => {
    if (!active || Date.now() - active.at > SCRAPE_REUSE_MS) active = { at: Date.now(), read: scrape.read('postgres', () => readActiveBulkBatches(deps.pool)) };
    return active.read;
  };
  scrape.gauge({
    name: 'inferq_batches',
    help: 'Batch API batches not yet ended, by status (validating, in_progress, finalizing, cancelling)',
    labelNames: ['status'],
    source: 'postgres',
    async read(values) {
      for (const b of await readActive()) values.inc({ status: b.status });
    },
  });
  scrape.gauge({
    name: 'inferq_batch_requests_remaining',
    help: 'Requests of the Batch API batches not yet ended that have not been answered yet',
    source: 'postgres',
    async read(values) {
      values.set((await readActive()).reduce((n, b) => n + Math.max(0, b.total - b.completed - b.failed), 0));
    },
  });
  scrape.gauge({
    name: 'inferq_batches_missing_window',
    help: 'Batches in progress that, at the rate their requests have ended so far, end after their completion_window',
    source: 'postgres',
    async read(values) {
      const now = Date.now();
      values.set((await readActive()).filter((b) => missesWindow(b, now)).length);
    },
  });
  const batchLines = new Counter({
    name: 'inferq_batch_lines_submitted_total',
    help: 'Lines of Batch API files submitted as jobs (or refused at submit), by this API process',
    registers: [registry],
  });

  const redisConnection = createRedisOutageMetrics(registry);
  const postgres = createPostgresOutageMetrics(registry);
  return {
    registry,
    /** The outage callbacks of one Redis connection (watchRedisOutages). */
    redisConnection,
    /** The outage and failover callbacks of the pool's watch (watchPostgresOutages). */
    postgres,
    observeRequest(method: string, route: string, statusCode: number, seconds: number): void {
      httpDuration.observe({ method, route, status_code: String(statusCode) }, seconds);
    },
    jobsRecordLost(model: string, count: number): void {
      recordLost.inc({ model }, count);
    },
    jobSubmitted(model: string, priority: string): void {
      submitted.inc({ model, priority });
    },
    cacheLookup(model: string, hit: boolean): void {
      cacheLookups.inc({ model, result: hit ? 'hit' : 'miss' });
    },
    inputSegment(written: boolean): void {
      inputSegments.inc({ outcome: written ? 'written' : 'failed' });
    },
    jobViewRead(source: 'memory' | 'postgres'): void {
      jobViews.inc({ source });
    },
    retentionSweepBehind(behind: boolean): void {
      retentionBehind.set(behind ? 1 : 0);
    },
    jobsPurged(reason: string, count: number): void {
      purged.inc({ reason }, count);
    },
    jobInputsDropped(count: number): void {
      inputsDropped.inc(count);
    },
    jobOrphanedObjectsDeleted(count: number): void {
      orphansDeleted.inc(count);
    },
    jobPartitionsDropped(count: number): void {
      partitionsDropped.inc(count);
    },
    retentionRowsDeleted(table: 'batches' | 'audit_log' | 'lost_jobs', count: number): void {
      rowsDeleted.inc({ table }, count);
    },
    upload(event: 'created' | 'claimed' | 'expired', count = 1): void {
      uploads.inc({ event }, count);
    },
    batchLinesSubmitted(count: number): void {
      batchLines.inc(count);
    },
  };
}
export type ApiMetrics = ReturnType<typeof createApiMetrics>;

/** A minute after it started running, whether the batch, at the rate its lines have ended so far, ends after its window. */
export function missesWindow(b: Pick<BulkBatchRecord, 'status' | 'inProgressAt' | 'expiresAt' | 'total' | 'completed' | 'failed'>, now: number): boolean {
  if (b.status !== 'in_progress' || b.inProgressAt === null) return false;
  const ran = now - b.inProgressAt.getTime();
  if (ran < 60_000) return false;
  const done = b.completed + b.failed;
  return done === 0 || now + ((b.total - done) * ran) / done > b.expiresAt.getTime();
}
