import type { Logger } from '@inferq/core';
import { Batcher } from '@inferq/inference';
import { QueueWorker, priorityOfBull, queueNameFor, type QueueJob, type Redis } from '@inferq/queue';
import type { BatchRunner } from './batch-runner.ts';
import { parseJobPayload } from './job-inputs.ts';
import type { PendingJob } from './pending-job.ts';

export interface ModelWorkerOptions {
  model: string;
  connection: Redis;
  prefix: string;
  maxBatchSize: number;
  maxBatchDelayMs: number;
  lockDurationMs: number;
  stalledIntervalMs: number;
  runner: BatchRunner;
  logger: Logger;
}

/**
 * Batches in flight per model. The session thread runs one batch at a time;
 * with two in flight, one batch's claim (Postgres) and the previous one's
 * result writes overlap inference instead of leaving the device idle.
 */
const BATCHES_IN_FLIGHT = 2;

/**
 * Consumes one model's queue. BullMQ holds one batch's worth of jobs more
 * than the batches in flight, so the next batch fills while they run.
 */
export function createModelWorker(o: ModelWorkerOptions) {
  const batcher = new Batcher<PendingJob>({ maxBatchSize: o.maxBatchSize, maxBatchDelayMs: o.maxBatchDelayMs });
  const stopLoop = new AbortController();

  const loop = (async () => {
    const running = new Set<Promise<void>>();
    for (;;) {
      if (running.size >= BATCHES_IN_FLIGHT) await Promise.race(running);
      let batch: PendingJob[];
      try {
        batch = await batcher.next(stopLoop.signal);
      } catch {
        break;
      }
      // runBatch settles its jobs itself and never rejects.
      const run: Promise<void> = o.runner.runBatch(batch).finally(() => running.delete(run));
      running.add(run);
    }
    await Promise.all(running);
  })();

  async function processJob(job: QueueJob): Promise<void> {
    const attempt = { jobId: job.id!, attemptsMade: job.attemptsMade, maxAttempts: job.opts.attempts ?? 1 };
    let payload;
    try {
      payload = parseJobPayload(job.data);
    } catch (err) {
      throw await o.runner.failIntake(attempt, err);
    }
    const pending = { ...attempt, model: o.model, modelVersion: payload.modelVersion, priority: priorityOfBull(job.priority), createdAtMs: job.timestamp, traceContext: payload.traceContext };
    await new Promise<void>((resolve, reject) => {
      let settled = false;
      batcher.add({
        key: `${payload.modelVersion}|${payload.batchKey}`,
        priority: job.priority,
        value: {
          ...pending,
          settle(outcome) {
            if (settled) return;
            settled = true;
            if (outcome.ok) resolve();
            else reject(outcome.error);
          },
        },
      });
    });
  }

  const worker = new QueueWorker(queueNameFor(o.model), processJob, {
    connection: o.connection,
    prefix: o.prefix,
    concurrency: Math.min(o.maxBatchSize * (BATCHES_IN_FLIGHT + 1), 1024),
    lockDuration: o.lockDurationMs,
    stalledInterval: o.stalledIntervalMs,
    maxStalledCount: 3,
    skipVersionCheck: true,
  });
  worker.on('error', (err) => o.logger.warn({ err: err.message, model: o.model }, 'queue worker error'));
  worker.on('failed', (job, err) => o.logger.warn({ jobId: job?.id, model: o.model, attemptsMade: job?.attemptsMade, err: err.message }, 'queue job attempt failed'));

  return {
    model: o.model,
    /** Stops taking jobs, finishes what it holds (results stored, jobs acknowledged), then stops the loop. */
    async close(): Promise<void> {
      await worker.close();
      stopLoop.abort();
      await loop;
    },
    /** Stops at once; held jobs are left to BullMQ's stalled-job recovery. */
    async kill(): Promise<void> {
      stopLoop.abort();
      await worker.close(true);
    },
  };
}
export type ModelWorker = ReturnType<typeof createModelWorker>;
