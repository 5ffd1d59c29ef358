import type { Logger } from '@inferq/core';
import type { AdaptiveBatching } from '@inferq/contracts';
import { Batcher, BatchesInFlight, chooseBatching, type InferenceProfile } from '@inferq/inference';
import { createQueueConsumer, explainRedisError, isRedisOutageError, priorityOfBull, type JobAck, type QueueJob, type RedisClient } from '@inferq/queue';
import type { InferenceBatchRunner } from './inference-batch-runner.ts';
import { parseJobPayload } from './job-inputs.ts';
import type { PendingJob } from './pending-job.ts';
import { RunningBatches } from './running-batches.ts';

export interface ModelConsumerOptions {
  model: string;
  connection: RedisClient;
  prefix: string;
  maxBatchSize: number;
  maxBatchDelayMs: number;
  lockDurationMs: number;
  stalledIntervalMs: number;
  /** Batches in flight at once (WORKER_BATCHES_IN_FLIGHT), or `auto`: as many as the measured batches want (BatchesInFlight). @default 2 */
  batchesInFlight?: number | 'auto';
  /** The consumers of this model feeding the same device (WORKER_FEEDERS): `auto` keeps this one's share. @default 1 */
  feeders?: number;
  runner: InferenceBatchRunner;
  logger: Logger;
  /** The model's measured inference time per batch size. */
  profile: InferenceProfile;
  /** Close batches early for jobs with deadlines (DEADLINE_SCHEDULING). */
  deadlines: boolean;
  /**
   * `batching: "auto"`: maxBatchSize and maxBatchDelayMs are bounds; the size
   * and delay are chosen from the profile to keep queue wait under the target,
   * again every few batches, and reported with the curve.
   */
  adaptive?: { latencyTargetMs: number; report(state: AdaptiveBatching): void };
}

/** An `auto` model's size and delay are chosen again after this many batches. */
const ADAPT_EVERY_BATCHES = 8;

/** Running deviations added to the expected run time a batch is closed ahead of a deadline by: a slower than usual run still makes it. */
const DEADLINE_SAFETY_DEVIATIONS = 2;
/** What a batch is expected to take before the model has run here: room for the claim and the result write at least. */
const UNMEASURED_RUN_MS = 25;
/** Added to every estimate: timers fire late and the event loop is busy under load. */
const DEADLINE_MARGIN_MS = 20;

/**
 * Batches in flight per model, by default. The session thread runs one batch
 * at a time; with two in flight, one batch's claim (Postgres) and the previous
 * one's result writes overlap inference instead of leaving the device idle.
 */
const DEFAULT_BATCHES_IN_FLIGHT = 2;
/**
 * `auto`'s bounds: never fewer than the default, at most this many. Each batch in flight holds a batch of jobs
 * locked by this worker (and BullMQ one batch more), away from other workers and ahead of any more urgent job that
 * arrives: the ceiling bounds what a fast device's appetite costs them.
 */
const AUTO_MAX_BATCHES_IN_FLIGHT = 16;
/** The jobs the running mean of entries per job is taken over (the queue consumer's capacity in entries). */
const ENTRY_SIZE_MEAN_JOBS = 32;
/** Jobs one model's consumer may hold at once, whatever the batches in flight. */
const MAX_HELD_JOBS = 1024;

/**
 * Consumes one model's queue: each job taken joins the batcher with its
 * handle, and each batch the batcher closes goes to the batch runner, which
 * uses every job's handle once its outcome is stored. BullMQ holds one
 * batch's worth of jobs more than the batches in flight, so the next batch
 * fills while they run.
 */
export function createModelConsumer(o: ModelConsumerOptions) {
  const depth =
    o.batchesInFlight === 'auto' ? new BatchesInFlight({ min: DEFAULT_BATCHES_IN_FLIGHT, max: AUTO_MAX_BATCHES_IN_FLIGHT, feeders: o.feeders }) : undefined;
  const fixed = typeof o.batchesInFlight === 'number' ? o.batchesInFlight : DEFAULT_BATCHES_IN_FLIGHT;
  const inFlight = (): number => depth?.target() ?? fixed;
  /** BullMQ holds one batch's worth more than the batches in flight, so the next batch fills while they run. */
  const heldJobs = (): number => Math.min(o.maxBatchSize * (inFlight() + 1), MAX_HELD_JOBS);
  /**
   * Queue entries per job taken, a running mean over the jobs (a group entry carries several, QUEUE_GROUP_MAX): the queue
   * consumer's capacity counts entries. A mean of 1 ÷ the entry's size over jobs is 1 ÷ the mean size over entries (a job is
   * drawn from an entry in proportion to its size), so entries held × mean size stays the jobs wanted. It starts as if
   * each entry were a full batch: a consumer that starts on a queue of full entries holds its batches' worth, not a
   * batch's worth of entries each, away from other workers; one that meets jobs alone rises to them within a few batches.
   */
  let entriesPerJob = 1 / o.maxBatchSize;
  // One entry more: an entry split over two batches is held until both have run.
  const heldEntries = (): number => Math.ceil(heldJobs() * entriesPerJob) + 1;
  const batcher = new Batcher<PendingJob>({
    maxBatchSize: o.maxBatchSize,
    maxBatchDelayMs: o.maxBatchDelayMs,
    estimateRunMs: (items) => (o.profile.expectedServiceMs(items, DEADLINE_SAFETY_DEVIATIONS) ?? UNMEASURED_RUN_MS) + DEADLINE_MARGIN_MS,
  });
  const stopLoop = new AbortController();

  function adapt(): void {
    if (!o.adaptive) return;
    const bounds = { maxBatchSize: o.maxBatchSize, maxBatchDelayMs: o.maxBatchDelayMs, latencyTargetMs: o.adaptive.latencyTargetMs };
    const choice = chooseBatching(o.profile, bounds);
    batcher.setLimits(choice);
    o.adaptive.report({ model: o.model, latencyTargetMs: bounds.latencyTargetMs, ...choice, curve: o.profile.curve() });
  }
  adapt();

  const running = new RunningBatches({ inFlight, mostUrgentPending: () => batcher.mostUrgent() });
  const loop = (async () => {
    let batches = 0;
    for (;;) {
      if (++batches % ADAPT_EVERY_BATCHES === 0) adapt();
      const urgentBelow = await running.room();
      let batch: PendingJob[];
      try {
        batch = await batcher.next(stopLoop.signal, { urgentBelow });
      } catch {
        break;
      }
      // The runner acknowledges every job itself and never rejects.
      const startedMs = performance.now();
      const run: Promise<void> = o.runner.run(batch).then((stats) => {
        // A batch that ran teaches `auto` its device time and the rest of its way (its wait for the session left out).
        if (!depth || !stats || !(stats.inferMs > 0)) return;
        depth.observe({ deviceMs: stats.inferMs, aroundMs: performance.now() - startedMs - stats.sessionMs });
        consumer.setCapacity(heldEntries());
      });
      running.add(run, batch[0]!.priority);
    }
    await running.ended();
  })();

  /** A job taken from the queue joins the batcher; one whose payload is unreadable fails at once, its failure stored. */
  async function takeJob(job: QueueJob, ack: JobAck): Promise<void> {
    entriesPerJob += (1 / job.entrySize - entriesPerJob) / ENTRY_SIZE_MEAN_JOBS;
    consumer.setCapacity(heldEntries());
    const attempt = { jobId: job.id, attemptsMade: job.attemptsMade, maxAttempts: job.maxAttempts };
    let payload;
    try {
      payload = parseJobPayload(job.data);
    } catch (err) {
      await o.runner.failIntake({ ...attempt, ack }, err);
      return;
    }
    // The batcher runs on the monotonic clock; the deadline is wall-clock time.
    const deadlineMs = o.deadlines && payload.deadlineAt !== undefined ? performance.now() + (payload.deadlineAt - Date.now()) : undefined;
    batcher.add({
      key: `${payload.modelVersion}|${payload.batchKey}`,
      priority: job.priority,
      deadlineMs,
      value: {
        ...attempt,
        model: o.model,
        modelVersion: payload.modelVersion,
        priority: payload.priority ?? priorityOfBull(job.priority),
        createdAtMs: job.timestamp,
        traceContext: payload.traceContext,
        deadlineAt: payload.deadlineAt,
        carriedInputs: payload.inputs,
        ack,
      },
    });
    running.arrived();
  }

  const consumer = createQueueConsumer(
    {
      connection: o.connection,
      prefix: o.prefix,
      model: o.model,
      concurrency: heldEntries(),
      lockDurationMs: o.lockDurationMs,
      stalledIntervalMs: o.stalledIntervalMs,
      maxStalledCount: 3,
      onRepeatedAck: (jobId, repeated, first) =>
        o.logger.warn({ jobId, model: o.model, repeated, first }, 'queue job handle used twice; the second use is ignored'),
      onError: (err) => {
        // A failover's driver errors (a lost connection, a job entry the new primary never had) are told once by the
        // connection's outage watch; here they are debug lines with what they mean.
        const { kind, meaning } = explainRedisError(err);
        if (kind === 'other') o.logger.warn({ err: err.message, model: o.model }, 'queue worker error');
        else o.logger.debug({ err: err.message, model: o.model, kind }, meaning);
      },
      onAttemptFailed: (entry, err) =>
        (isRedisOutageError(err) ? o.logger.debug : o.logger.warn).call(
          o.logger,
          { jobId: entry.id, model: o.model, attemptsMade: entry.attemptsMade, err: err.message },
          'queue job attempt failed',
        ),
    },
    takeJob,
  );

  return {
    model: o.model,
    /** Stops taking new jobs of the model (a fault of this worker's); the ones held finish or go back. */
    pause: (): Promise<void> => consumer.pause(),
    resume: (): Promise<void> => consumer.resume(),
    /** Stops taking jobs, finishes what it holds (results stored, jobs acknowledged), then stops the loop. */
    async close(): Promise<void> {
      await consumer.close();
      stopLoop.abort();
      await loop;
    },
    /** Stops at once; held jobs are left to BullMQ's stalled-job recovery. */
    async kill(): Promise<void> {
      stopLoop.abort();
      await consumer.kill();
    },
  };
}
export type ModelConsumer = ReturnType<typeof createModelConsumer>;
