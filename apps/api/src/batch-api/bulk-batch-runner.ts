import { randomUUID } from 'node:crypto';
import type { BatchEndpoint } from '@inferq/contracts';
import { createPeriodicTask, type Logger, type PeriodicTask } from '@inferq/core';
import {
  deleteBulkBatchLines,
  findFile,
  insertBulkBatchLines,
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
import { createBatchAnswers, LeaseLost } from './batch-answers.ts';
import { FILE_ERRORS_MAX, parseBatchLine, readLines } from './batch-lines.ts';
import { writeBatchFiles } from './batch-output.ts';
import { createBatchSubmitter, LINE_CHUNK } from './batch-submitter.ts';

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
  storage: Pick<Storage, 'getObjectStream' | 'putObject' | 'putObjectStream' | 'listObjects' | 'deleteObjects'>;
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
      if (batch.status === 'validating') batch = (await validate(batch, check, log)) ?? batch;
      if (batch.status === 'failed') return;
      const answers = createBatchAnswers({ pool, storage: deps.storage, handler: endpointOf(batch).handler }, batch, owner);
      // A batch cancelled in progress still has jobs to cancel and wait for.
      if (batch.status === 'in_progress' || (batch.status === 'cancelling' && batch.inProgressAt))
        await submitter.submitAndWatch(batch, { check, ending, endpoint: endpointOf(batch), answers, log });
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

  /** Reads the whole file: every line must be a request; writes the lines' custom_ids. The batch after it (in_progress or failed). */
  async function validate(batch: BulkBatchRecord, check: () => Promise<BulkBatchRecord>, log: Logger): Promise<BulkBatchRecord | undefined> {
    const fail = (errors: BulkBatchError[]) =>
      deleteBulkBatchLines(pool, batch.id).then(() => updateBulkBatch(pool, batch.id, { status: 'failed', errors }, ['validating']));
    await deleteBulkBatchLines(pool, batch.id);
    const file = await findFile(pool, batch.inputFileId, null);
    if (!file) return fail([{ code: 'file_not_found', message: `file ${batch.inputFileId} was deleted`, line: null, param: 'input_file_id' }]);
    const errors: BulkBatchError[] = [];
    let lines: number[] = [];
    let ids: string[] = [];
    let total = 0;
    const flush = async () => {
      if (lines.length > 0 && !(await insertBulkBatchLines(pool, batch.id, lines, ids)))
        errors.push({
          code: 'duplicate_custom_id',
          message: `a custom_id on lines ${lines[0]} to ${lines.at(-1)} repeats an earlier one`,
          line: null,
          param: 'custom_id',
        });
      lines = [];
      ids = [];
      if ((await check()).status === 'cancelling') throw new LeaseLost('cancelled while validating');
    };
    for await (const { line, text } of readLines(await deps.storage.getObjectStream(file.objectKey))) {
      const parsed = parseBatchLine(text, line, endpointOf(batch));
      if ('code' in parsed) errors.push(parsed);
      else if (++total > settings.maxLines)
        errors.push({ code: 'too_many_lines', message: `the file has more than ${settings.maxLines} requests`, line, param: null });
      else if (errors.length === 0) {
        lines.push(line);
        ids.push(parsed.customId);
      }
      if (errors.length >= FILE_ERRORS_MAX || (total > settings.maxLines && errors.length > 0)) break;
      if (lines.length >= LINE_CHUNK) await flush();
    }
    if (errors.length === 0) await flush();
    if (errors.length === 0 && total === 0) errors.push({ code: 'empty_file', message: 'the file has no requests', line: null, param: 'input_file_id' });
    if (errors.length > 0) {
      log.info({ errors: errors.length }, 'batch file refused');
      return fail(errors);
    }
    return updateBulkBatch(pool, batch.id, { status: 'in_progress', total }, ['validating']);
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
