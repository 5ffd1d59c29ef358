import { setTimeout as sleep } from 'node:timers/promises';
import type { BatchEndpoint, JobStatus } from '@inferq/contracts';
import { AppError, createPeriodicTask, type Logger, type PeriodicTask } from '@inferq/core';
import {
  cancelQueuedJobsByIds,
  deleteBulkBatchLines,
  findFile,
  findJobsByIds,
  insertBulkBatchLines,
  leaseBulkBatch,
  readBulkBatchLines,
  recordBulkBatchSubmits,
  releaseBulkBatchLease,
  renewBulkBatchLease,
  updateBulkBatch,
  type BulkBatchError,
  type BulkBatchRecord,
  type BulkLineOutcome,
  type Pool,
} from '@inferq/db';
import type { JobProducer } from '@inferq/queue';
import type { Storage, TensorStore } from '@inferq/storage';
import { newJobSlot, removeCanceledJobs, type JobsService } from '../services/jobs-service.ts';
import { submitTensors } from '../services/submit-body.ts';
import { FILE_ERRORS_MAX, parseBatchLine, readLines, type BatchLine } from './batch-lines.ts';
import { writeBatchFiles } from './batch-output.ts';

// Advances Batch API batches, each by one API process at a time (a lease in
// bulk_batches, renewed as it goes; a process that dies lets it run out and
// another takes the batch over). A batch goes validating → in_progress →
// finalizing → completed; or failed (its file refused), cancelling →
// cancelled, or expired (its window passed). Every line's submit carries an
// Idempotency-Key of the batch and line, so a takeover that submits a line
// again gets the job the first submit made: each line is one job.

export interface BatchRunnerDeps {
  pool: Pool;
  storage: Pick<Storage, 'getObjectStream' | 'putObjectStream' | 'deleteObjects'>;
  jobs: Pick<JobsService, 'submitJob' | 'forgetJobs'>;
  producer: JobProducer;
  tensors: Pick<TensorStore, 'locateTensor'>;
  logger: Logger;
  settings: {
    /** BATCH_RUNNERS: batches advanced at once by this process. */
    runners: number;
    /** BATCH_JOBS_IN_FLIGHT: a batch's jobs queued or running at once. */
    jobsInFlight: number;
    /** BATCH_MAX_LINES */
    maxLines: number;
    /** How long the URLs of outputs kept in object storage last in the output file. */
    outputUrlTtlS: number;
    /** How often runners look for work and batches look at their jobs. @default 250 */
    pollMs?: number;
    /** How long a lease lasts without renewal. @default 30000 */
    leaseMs?: number;
  };
  onEvent?(event: 'submitted' | 'finished', count: number): void;
}

export interface BatchRunner extends PeriodicTask {
  /** Looks for work now (a batch was just created here). */
  wake(): void;
}

/** Lines read, parsed and written a chunk at a time. */
const LINE_CHUNK = 1000;
/** Lines submitted at once (the job intake groups them into few inserts). */
const SUBMIT_CONCURRENCY = 32;
/** Errors that mean "later", not "this line is wrong". */
const BACK_OFF_CODES = new Set(['QUEUE_FULL', 'QUEUE_UNAVAILABLE', 'MODEL_UNAVAILABLE', 'RATE_LIMITED']);
const FINISHED: ReadonlySet<JobStatus> = new Set(['succeeded', 'failed', 'canceled', 'expired']);

class LeaseLost extends Error {}

export function createBatchRunner(deps: BatchRunnerDeps): BatchRunner {
  const { pool, logger, settings } = deps;
  const pollMs = settings.pollMs ?? 250;
  const leaseMs = settings.leaseMs ?? 30_000;
  const running = new Map<string, Promise<void>>();
  let stopping = false;

  /** One batch, from the status it has to its end (or until its lease is lost or the process stops). */
  async function run(leased: BulkBatchRecord): Promise<void> {
    const log = logger.child({ batchId: leased.id });
    let batch = leased;
    let renewedAt = Date.now();
    /** Renews the lease at most once a second and reads the batch afresh (a cancel shows); throws when the lease is gone. */
    const check = async (): Promise<BulkBatchRecord> => {
      if (stopping) throw new LeaseLost('stopping');
      if (Date.now() - renewedAt < 1_000) return batch;
      const now = await renewBulkBatchLease(pool, batch.id, leaseMs);
      if (!now) throw new LeaseLost('lease lost');
      renewedAt = Date.now();
      return (batch = now);
    };
    const ending = (): 'cancelled' | 'expired' | undefined =>
      batch.status === 'cancelling' ? 'cancelled' : Date.now() >= batch.expiresAt.getTime() ? 'expired' : undefined;

    try {
      if (batch.status === 'validating') batch = (await validate(batch, check, log)) ?? batch;
      if (batch.status === 'in_progress') await submitAndWatch(batch, check, ending, log);
      if (batch.status === 'failed') return;
      batch = await check();
      const target = ending() ?? 'completed';
      if (target !== 'cancelled') batch = (await updateBulkBatch(pool, batch.id, { status: 'finalizing' }, ['in_progress', 'finalizing'])) ?? batch;
      const written = await writeBatchFiles({ pool, storage: deps.storage, tensors: deps.tensors, outputUrlTtlS: settings.outputUrlTtlS }, batch, target);
      await updateBulkBatch(pool, batch.id, { ...written, status: target });
      log.info({ status: target, completed: written.completed, failed: written.failed }, 'batch ended');
    } catch (err) {
      if (err instanceof LeaseLost) log.info({ why: err.message }, 'batch left to another runner');
      else log.warn({ err: (err as Error).message }, 'batch runner failed; the batch is taken up again');
    } finally {
      await releaseBulkBatchLease(pool, leased.id).catch(() => undefined);
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
      const parsed = parseBatchLine(text, line, batch.endpoint as BatchEndpoint);
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

  /** Submits the file's lines after `submitted`, never more than BATCH_JOBS_IN_FLIGHT unfinished, and waits for them all. */
  async function submitAndWatch(
    start: BulkBatchRecord,
    check: () => Promise<BulkBatchRecord>,
    ending: () => 'cancelled' | 'expired' | undefined,
    log: Logger,
  ): Promise<void> {
    const outstanding = new Set<string>();
    const counts = await recount(start, outstanding);
    let lastCounts = '';

    /** Looks at the outstanding jobs, keeps the counts, and stops the batch's jobs when it is cancelled or expired. */
    const refresh = async (): Promise<boolean> => {
      await check();
      const ids = [...outstanding];
      for (let i = 0; i < ids.length; i += LINE_CHUNK) {
        for (const job of await findJobsByIds(pool, ids.slice(i, i + LINE_CHUNK))) {
          if (!FINISHED.has(job.status)) continue;
          outstanding.delete(job.id);
          if (job.status === 'succeeded') counts.completed++;
          else counts.failed++;
        }
      }
      const key = `${counts.completed}/${counts.failed}`;
      if (key !== lastCounts) {
        await updateBulkBatch(pool, start.id, counts);
        lastCounts = key;
      }
      if (ending()) {
        const canceled = await cancelQueuedJobsByIds(pool, [...outstanding]);
        deps.jobs.forgetJobs(canceled.map((j) => j.id));
        await removeCanceledJobs(deps.producer, canceled);
        return true;
      }
      return false;
    };

    /** Waits until the chunk fits under BATCH_JOBS_IN_FLIGHT; false when the batch is ending instead. */
    const waitForRoom = async (size: number): Promise<boolean> => {
      while (outstanding.size + size > settings.jobsInFlight) {
        if (await refresh()) return false;
        await sleep(pollMs);
      }
      return true;
    };
    /** Submits the chunk, waiting out a full or absent queue; false when the batch is ending instead. */
    const submitChunk = async (chunk: readonly BatchLine[]): Promise<boolean> => {
      await check();
      if (ending()) return false;
      let outcomes: BulkLineOutcome[] | undefined;
      while ((outcomes = await submitLines(start, chunk)) === undefined) {
        // Nothing of the chunk is recorded; its lines that did get jobs get the same ones again (Idempotency-Key).
        if (await refresh()) return false;
        await sleep(pollMs * 4);
      }
      await recordBulkBatchSubmits(pool, start.id, outcomes, chunk.at(-1)!.line);
      for (const o of outcomes) {
        if (o.jobId) outstanding.add(o.jobId);
        else counts.failed++;
      }
      deps.onEvent?.('submitted', outcomes.length);
      return true;
    };

    const file = await findFile(pool, start.inputFileId, null);
    const chunkSize = Math.min(LINE_CHUNK, settings.jobsInFlight);
    let pending: BatchLine[] = [];
    let going = file !== undefined;
    if (file) {
      for await (const { line, text } of readLines(await deps.storage.getObjectStream(file.objectKey))) {
        if (line <= start.submitted) continue;
        const parsed = parseBatchLine(text, line, start.endpoint as BatchEndpoint);
        if ('code' in parsed) continue; // validated already: the file has not changed
        pending.push(parsed);
        if (pending.length < chunkSize) continue;
        going = (await waitForRoom(pending.length)) && (await submitChunk(pending));
        pending = [];
        if (!going) break;
      }
    }
    if (going && pending.length > 0 && (await waitForRoom(pending.length))) await submitChunk(pending);
    while (outstanding.size > 0) {
      await refresh();
      if (outstanding.size > 0) await sleep(pollMs);
    }
    log.debug({ ...counts }, 'batch jobs done');
  }

  /** Lines submitted so far, before this runner: counted once from their jobs; the unfinished ones are watched. */
  async function recount(batch: BulkBatchRecord, outstanding: Set<string>): Promise<{ completed: number; failed: number }> {
    const counts = { completed: 0, failed: 0 };
    for (let after = 0; ;) {
      const lines = await readBulkBatchLines(pool, batch.id, after, LINE_CHUNK);
      if (lines.length === 0 || lines[0]!.line > batch.submitted) break;
      after = lines.at(-1)!.line;
      const jobIds = lines.filter((l) => l.line <= batch.submitted && l.jobId).map((l) => l.jobId!);
      counts.failed += lines.filter((l) => l.line <= batch.submitted && !l.jobId).length;
      for (const job of await findJobsByIds(pool, jobIds)) {
        if (job.status === 'succeeded') counts.completed++;
        else if (FINISHED.has(job.status)) counts.failed++;
        else outstanding.add(job.id);
      }
    }
    return counts;
  }

  /** Submits a chunk of lines as jobs; undefined when the queue asked to wait (nothing of the chunk is recorded then). */
  async function submitLines(batch: BulkBatchRecord, lines: readonly BatchLine[]): Promise<BulkLineOutcome[] | undefined> {
    const outcomes: BulkLineOutcome[] = new Array(lines.length);
    let backOff = false;
    let next = 0;
    const lane = async () => {
      while (next < lines.length && !backOff) {
        const at = next++;
        const { line, customId, body } = lines[at]!;
        try {
          const accepted = await deps.jobs.submitJob({
            principal: { keyId: batch.ownerKeyId, isAdmin: false, scopes: ['jobs:write'], rateLimitPerMin: null, weight: 1 },
            model: body.model,
            inputs: submitTensors(body.inputs, undefined),
            slot: newJobSlot(),
            priority: 'low',
            metadata: { ...body.metadata, 'inferq.batch_id': batch.id, 'inferq.custom_id': customId },
            idempotencyKey: `${batch.id}:${line}`,
            deadline: body.deadline,
            webhookUrl: body.webhook?.url,
            keepInputs: body.keepInputs,
          });
          outcomes[at] = { line, jobId: accepted.id, error: null };
        } catch (err) {
          if (!(err instanceof AppError) || BACK_OFF_CODES.has(err.code)) {
            if (err instanceof AppError) backOff = true;
            else throw err;
          } else outcomes[at] = { line, jobId: null, error: { code: err.code, message: err.message, status: err.status } };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(SUBMIT_CONCURRENCY, lines.length) }, lane));
    return backOff ? undefined : outcomes;
  }

  /** Takes batches nobody advances, up to BATCH_RUNNERS. */
  async function takeWork(): Promise<void> {
    while (!stopping && running.size < settings.runners) {
      const batch = await leaseBulkBatch(pool, leaseMs, [...running.keys()]);
      if (!batch) return;
      running.set(
        batch.id,
        run(batch).finally(() => running.delete(batch.id)),
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
