import { randomUUID } from 'node:crypto';
import type { BatchEndpoint } from '@inferq/contracts';
import { createPeriodicTask, type Logger, type PeriodicTask } from '@inferq/core';
import {
  deleteBulkBatchLines,
  leaseBulkBatch,
  releaseBulkBatchLease,
  renewBulkBatchLease,
  updateBulkBatch,
  type BulkBatchError,
  type BulkBatchRecord,
  type Pool,
} from '@inferq/db';
import type { JobProducer } from '@inferq/queue';
import type { Storage } from '@inferq/storage';
import type { JobsService } from '../services/jobs/jobs-service.ts';
import type { BatchEndpointHandler } from './batch-endpoints.ts';
import { createBatchAnswers, LeaseLost, type BatchAnswers } from './batch-answers.ts';
import { writeBatchFiles } from './batch-output.ts';
import { createBatchSubmitter } from './batch-submitter.ts';
import { startValidation } from './batch-validation.ts';

// Advances Batch API batches, each by one API process at a time (a lease in
// bulk_batches, renewed as it goes; a process that dies lets it run out and
// another takes the batch over). A batch goes validating → in_progress →
// finalizing → completed; or failed (its file refused), cancelling →
// cancelled, or expired (its window passed). Every job of a line is
// submitted under an Idempotency-Key of the batch and line, so a takeover that
// submits a line again gets the jobs the first submit made: each line is
// answered once.

export interface BulkBatchRunnerDeps {
  pool: Pool;
  storage: Pick<
    Storage,
    'getObjectStream' | 'putObject' | 'headObject' | 'createMultipartUpload' | 'uploadPart' | 'completeMultipartUpload' | 'abortMultipartUpload'
  >;
  jobs: Pick<JobsService, 'submitJob' | 'forgetJobs'>;
  producer: JobProducer;
  /** What each endpoint a batch may name does with a line (batch-endpoints.ts). */
  endpoints: Record<BatchEndpoint, BatchEndpointHandler>;
  logger: Logger;
  settings: {
    /** BATCH_RUNNERS: batches advanced at once by this process. */
    runners: number;
    /** BATCH_JOBS_IN_FLIGHT: a batch's jobs queued or running at once. */
    jobsInFlight: number;
    /** BATCH_MAX_LINES */
    maxLines: number;
    /** How often runners look for work and batches look at their jobs. @default 250 */
    pollMs?: number;
    /** How long a lease lasts without renewal. @default 30000 */
    leaseMs?: number;
  };
  /** Told of each chunk of lines submitted. */
  onSubmitted?(lines: number): void;
}

export interface BulkBatchRunner extends PeriodicTask {
  /** Looks for work now (a batch was just created here). */
  wake(): void;
}

export function createBulkBatchRunner(deps: BulkBatchRunnerDeps): BulkBatchRunner {
  const { pool, logger, settings } = deps;
  const pollMs = settings.pollMs ?? 250;
  const leaseMs = settings.leaseMs ?? 30_000;
  const running = new Map<string, Promise<void>>();
  let stopping = false;
  const submitter = createBatchSubmitter({ ...deps, settings: { jobsInFlight: settings.jobsInFlight, pollMs } });
  const endpointOf = (b: BulkBatchRecord) => ({ path: b.endpoint, handler: deps.endpoints[b.endpoint as BatchEndpoint] });

  /** One batch, from the status it has to its end (or until its lease is lost or the process stops). */
  async function run(leased: BulkBatchRecord, owner: string): Promise<void> {
    const log = logger.child({ batchId: leased.id });
    let batch = leased;
    let renewedAt = Date.now();
    /** Renews the lease at most once a second and reads the batch afresh (a cancel shows); throws when the lease is gone. */
    const check = async (): Promise<BulkBatchRecord> => {
      if (stopping) throw new LeaseLost('stopping');
      if (Date.now() - renewedAt < 1_000) return batch;
      const now = await renewBulkBatchLease(pool, batch.id, owner, leaseMs);
      if (!now) throw new LeaseLost('lease lost');
      renewedAt = Date.now();
      return (batch = now);
    };
    const ending = (): 'cancelled' | 'expired' | undefined =>
      batch.status === 'cancelling' ? 'cancelled' : Date.now() >= batch.expiresAt.getTime() ? 'expired' : undefined;

    try {
      const answers = createBatchAnswers({ pool, storage: deps.storage, handler: endpointOf(batch).handler }, batch, owner);
      // The file is checked while its first lines run: they are submitted as soon as they are recorded.
      const validation =
        batch.status === 'validating'
          ? startValidation({ pool, storage: deps.storage, maxLines: settings.maxLines }, batch, endpointOf(batch), check, log)
          : undefined;
      // A refused file stops the batch as a cancel does (its queued jobs canceled), then fails it.
      const stop = () => (validation?.refused() ? 'cancelled' : ending());
      if (batch.status !== 'finalizing')
        await submitter.submitAndWatch(batch, {
          check,
          ending: stop,
          validated: () => validation?.through() ?? Infinity,
          endpoint: endpointOf(batch),
          answers,
          log,
        });
      await validation?.done;
      validation?.through();
      const errors = validation?.refused();
      if (errors) return await refuse(batch, owner, errors, answers);
      batch = await check();
      const target = ending() ?? 'completed';
      if (target !== 'cancelled') batch = (await updateBulkBatch(pool, batch.id, { status: 'finalizing' }, ['in_progress', 'finalizing'])) ?? batch;
      const written = await writeBatchFiles({ pool, storage: deps.storage }, answers, batch, target);
      await updateBulkBatch(pool, batch.id, { ...written, status: target });
      log.info({ status: target, completed: written.completed, failed: written.failed }, 'batch ended');
      await releaseBulkBatchLease(pool, leased.id, owner);
    } catch (err) {
      if (err instanceof LeaseLost) {
        log.info({ why: err.message }, 'batch left to another runner');
        await releaseBulkBatchLease(pool, leased.id, owner).catch(() => undefined);
      } else {
        // The lease is kept until it runs out: a runner (here or elsewhere) takes the batch up again then, not at once.
        log.warn({ err: (err as Error).message, retryInMs: leaseMs }, 'batch runner failed; the batch is taken up again when its lease runs out');
      }
    }
  }

  /** Ends a batch whose file was refused: `failed` with the file's errors; its lines and the answers of those that ran are dropped. */
  async function refuse(batch: BulkBatchRecord, owner: string, errors: BulkBatchError[], answers: BatchAnswers): Promise<void> {
    await answers.abort();
    await deleteBulkBatchLines(pool, batch.id);
    await updateBulkBatch(pool, batch.id, { status: 'failed', errors }, ['validating', 'cancelling']);
    await releaseBulkBatchLease(pool, batch.id, owner);
  }

  /** Takes batches nobody advances, up to BATCH_RUNNERS. */
  async function takeWork(): Promise<void> {
    while (!stopping && running.size < settings.runners) {
      const owner = randomUUID();
      const batch = await leaseBulkBatch(pool, owner, leaseMs, [...running.keys()]);
      if (!batch) return;
      running.set(
        batch.id,
        run(batch, owner).finally(() => running.delete(batch.id)),
      );
    }
  }
  const task = createPeriodicTask({ what: 'batch runner', intervalMs: pollMs, logger, run: takeWork });

  return {
    start: () => {
      if (settings.runners > 0) task.start();
    },
    wake: () => {
      if (settings.runners > 0) takeWork().catch((err: Error) => logger.warn({ err: err.message }, 'batch runner failed'));
    },
    async stop() {
      stopping = true;
      await task.stop();
      await Promise.all(running.values());
    },
  };
}
