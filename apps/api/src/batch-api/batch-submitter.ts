import { setTimeout as sleep } from 'node:timers/promises';
import type { JobStatus } from '@inferq/contracts';
import { AppError, type Logger } from '@inferq/core';
import {
  cancelQueuedJobsByIds,
  findApiKeyWeight,
  findFile,
  findJobStatuses,
  readBulkBatchLines,
  recordBulkBatchSubmits,
  updateBulkBatch,
  type BulkBatchLine,
  type BulkBatchRecord,
  type BulkLineOutcome,
  type Pool,
} from '@inferq/db';
import type { JobProducer } from '@inferq/queue';
import type { Storage } from '@inferq/storage';
import type { Principal } from '../services/keys/api-keys-service.ts';
import { removeCanceledJobs, type JobsService } from '../services/jobs/jobs-service.ts';
import type { BatchAnswers } from './batch-answers.ts';
import type { BatchEndpointHandler } from './batch-endpoints.ts';
import { parseBatchLine, readLines, type BatchLine } from './batch-lines.ts';

// A batch in progress: its file's lines after `submitted` become jobs, a
// chunk at a time, never more than BATCH_JOBS_IN_FLIGHT of its jobs unfinished
// (the batch's backpressure on the queue: Redis and the queued rows stay
// bounded whatever the file's size); the lines' counts follow their jobs. A
// cancel or the window's end cancels the queued jobs and waits for the rest.

/** Lines read and submitted a chunk at a time. */
const LINE_CHUNK = 1000;
/** Lines submitted at once (the job intake groups them into few inserts). */
const SUBMIT_CONCURRENCY = 256;
const FINISHED: ReadonlySet<JobStatus> = new Set(['succeeded', 'failed', 'canceled', 'expired']);

export interface BatchSubmitterDeps {
  pool: Pool;
  storage: Pick<Storage, 'getObjectStream'>;
  jobs: Pick<JobsService, 'submitJob' | 'forgetJobs'>;
  producer: JobProducer;
  settings: { jobsInFlight: number; pollMs: number };
  onSubmitted?(lines: number): void;
}

/** What the runner lends a batch's submitter: its lease check (the batch as last read) and whether it is ending. */
export interface BatchControl {
  check(): Promise<BulkBatchRecord>;
  ending(): 'cancelled' | 'expired' | undefined;
  endpoint: { path: string; handler: BatchEndpointHandler };
  /** Where the batch's lines are answered as they end. */
  answers: BatchAnswers;
  /** The last line of the file checked and recorded (Infinity: all of them): no line after it is submitted yet. */
  validated(): number;
  log: Logger;
}

/**
 * The submitted lines still running, by their jobs (a line may have several: one a text); the counts of those that
 * ended, and the ended ones not yet answered.
 */
class LineProgress {
  completed = 0;
  failed = 0;
  private readonly lineOf = new Map<string, BulkBatchLine>();
  private readonly left = new Map<number, { jobs: number; failed: boolean }>();
  private ended: BulkBatchLine[] = [];

  get jobsInFlight(): number {
    return this.lineOf.size;
  }
  unfinishedJobs(): string[] {
    return [...this.lineOf.keys()];
  }
  /** A submitted line: answered already (counted), or its jobs, or none (its submit was refused: it failed). */
  add(line: BulkBatchLine): void {
    if (line.written) return void (line.written === 'output' ? this.completed++ : this.failed++);
    if (!line.jobIds?.length) {
      this.failed++;
      return void this.ended.push(line);
    }
    this.left.set(line.line, { jobs: line.jobIds.length, failed: false });
    for (const id of line.jobIds) this.lineOf.set(id, line);
  }
  /** A job's end: its line ends with its last job, failed if any of them did not succeed. */
  jobEnded(jobId: string, status: JobStatus): void {
    const line = this.lineOf.get(jobId);
    if (line === undefined || !FINISHED.has(status)) return;
    this.lineOf.delete(jobId);
    const l = this.left.get(line.line)!;
    l.jobs--;
    l.failed ||= status !== 'succeeded';
    if (l.jobs > 0) return;
    this.left.delete(line.line);
    if (l.failed) this.failed++;
    else this.completed++;
    this.ended.push(line);
  }
  /** The lines that ended since the last call, to be answered. */
  takeEnded(): BulkBatchLine[] {
    const ended = this.ended;
    this.ended = [];
    return ended;
  }
}

/** Whether a refused submit means "later" (the queue full or away, a dependency down) rather than "this line is wrong". */
const isBackOff = (err: AppError) => err.status === 429 || err.status >= 500;

export function createBatchSubmitter(deps: BatchSubmitterDeps) {
  const { pool, settings } = deps;

  /**
   * Reads the status of the unfinished jobs, oldest submit first, a chunk at a time, and stops at the first chunk
   * with one still unfinished: a batch's jobs end roughly in the order they were submitted (one key, one priority),
   * so a poll costs what has ended since the last one, not the whole window. `all`: every unfinished job (a recount).
   */
  async function observe(progress: LineProgress, all = false): Promise<void> {
    const ids = progress.unfinishedJobs();
    for (let i = 0; i < ids.length; i += LINE_CHUNK) {
      const chunk = ids.slice(i, i + LINE_CHUNK);
      const statuses = new Map((await findJobStatuses(pool, chunk)).map((j) => [j.id, j.status]));
      // A job deleted meanwhile (DELETE /v1/jobs/:id) is over: its line did not succeed.
      for (const id of chunk) progress.jobEnded(id, statuses.get(id) ?? 'canceled');
      if (!all && [...statuses.values()].some((s) => !FINISHED.has(s))) return;
    }
  }

  /** The lines submitted before this runner took the batch: counted once from their jobs; the unfinished ones are watched. */
  async function recount(batch: BulkBatchRecord): Promise<LineProgress> {
    const progress = new LineProgress();
    for (let after = 0; ;) {
      const lines = (await readBulkBatchLines(pool, batch.id, after, LINE_CHUNK)).filter((l) => l.line <= batch.submitted);
      if (lines.length === 0) break;
      after = lines.at(-1)!.line;
      for (const l of lines) progress.add(l);
    }
    await observe(progress, true);
    return progress;
  }

  /**
   * Submits a chunk of lines as jobs; undefined when the queue asked to wait (nothing of the chunk is recorded then).
   * A line may have been submitted before only when this chunk was (`again`) or within a chunk of `batch.submitted`
   * (by a runner that stopped before it recorded its chunk: chunks go one at a time); the other lines' keys are new
   * and their replay lookup is skipped.
   */
  async function submitLines(batch: BulkBatchRecord, lines: readonly BatchLine[], handler: BatchEndpointHandler, again: boolean) {
    // The owner's weight as it is now (an admin may change it mid-batch): its share of the batch class against other keys.
    const weight = (await findApiKeyWeight(pool, batch.ownerKeyId)) ?? 1;
    const principal: Principal = { keyId: batch.ownerKeyId, isAdmin: false, scopes: ['jobs:write'], rateLimitPerMin: null, weight };
    const outcomes: BulkLineOutcome[] = new Array<BulkLineOutcome>(lines.length);
    let backOff = false;
    let next = 0;
    const lane = async () => {
      while (next < lines.length && !backOff) {
        const at = next++;
        const { line, customId, body } = lines[at]!;
        try {
          const { jobs, answer } = await handler.plan({ batchId: batch.id, line, customId, principal }, body);
          const jobIds: string[] = [];
          const mayBeReplay = again || line <= batch.submitted + LINE_CHUNK;
          for (const job of jobs) jobIds.push((await deps.jobs.submitJob({ ...job, mayBeReplay })).id);
          outcomes[at] = { line, jobIds, answer, error: null };
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          if (isBackOff(err)) backOff = true;
          else outcomes[at] = { line, jobIds: null, answer: null, error: { code: err.code, message: err.message, status: err.status } };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(SUBMIT_CONCURRENCY, lines.length) }, lane));
    return backOff ? undefined : outcomes;
  }

  /** Submits the file's lines after `submitted` and waits for all of them (or, when the batch is ending, for its running jobs). */
  async function submitAndWatch(start: BulkBatchRecord, control: BatchControl): Promise<void> {
    const progress = await recount(start);
    let written = '';

    /** Looks at the unfinished jobs, keeps the counts, and cancels the queued ones when the batch is ending; true then. */
    const refresh = async (): Promise<boolean> => {
      await control.check();
      await observe(progress);
      control.answers.answer(progress.takeEnded(), control.ending() ?? 'completed');
      const counts = `${progress.completed}/${progress.failed}`;
      if (counts !== written) {
        await updateBulkBatch(pool, start.id, { completed: progress.completed, failed: progress.failed });
        written = counts;
      }
      if (!control.ending()) return false;
      const canceled = await cancelQueuedJobsByIds(pool, progress.unfinishedJobs());
      deps.jobs.forgetJobs(canceled.map((j) => j.id));
      await removeCanceledJobs(deps.producer, canceled);
      return true;
    };
    /** Waits, watching the jobs, until `ready()` (room under BATCH_JOBS_IN_FLIGHT, a line checked); false when the batch is ending instead. */
    const waitUntil = async (ready: () => boolean): Promise<boolean> => {
      while (!ready()) {
        if (await refresh()) return false;
        await sleep(settings.pollMs);
      }
      return true;
    };
    // Room for `size` more jobs under BATCH_JOBS_IN_FLIGHT, and the answers no more than that window behind the jobs.
    const room = (size: number) => () =>
      control.answers.backlog() <= settings.jobsInFlight && (progress.jobsInFlight === 0 || progress.jobsInFlight + size <= settings.jobsInFlight);
    /** Submits the chunk, waiting out a full or absent queue; false when the batch is ending instead. */
    const submitChunk = async (chunk: readonly BatchLine[]): Promise<boolean> => {
      await control.check();
      if (control.ending()) return false;
      let outcomes: BulkLineOutcome[] | undefined;
      let again = false;
      while ((outcomes = await submitLines(start, chunk, control.endpoint.handler, again)) === undefined) {
        again = true;
        // Nothing of the chunk is recorded; its lines that did get jobs get the same ones again (Idempotency-Key).
        if (await refresh()) return false;
        await sleep(settings.pollMs * 4);
      }
      await recordBulkBatchSubmits(pool, start.id, outcomes, chunk.at(-1)!.line);
      outcomes.forEach((o, i) => progress.add({ ...o, customId: chunk[i]!.customId, written: null }));
      deps.onSubmitted?.(outcomes.length);
      return true;
    };

    const file = await findFile(pool, start.inputFileId, null);
    // A chunk of lines, each one job or more: at most a tenth of the window, so submitting goes on while the rest run.
    const chunkSize = Math.max(1, Math.min(LINE_CHUNK, Math.ceil(settings.jobsInFlight / 10)));
    let pending: BatchLine[] = [];
    let going = file !== undefined && !control.ending();
    if (file && going) {
      for await (const { line, text } of readLines(await deps.storage.getObjectStream(file.objectKey))) {
        if (line <= start.submitted) continue;
        if (!(await waitUntil(() => line <= control.validated()))) {
          going = false;
          break;
        }
        const parsed = parseBatchLine(text, line, control.endpoint);
        if ('code' in parsed) continue; // the validation refuses the file for it: the batch is ending
        pending.push(parsed);
        if (pending.length < chunkSize) continue;
        going = (await waitUntil(room(pending.length))) && (await submitChunk(pending));
        pending = [];
        if (!going) break;
      }
    }
    if (going && pending.length > 0 && (await waitUntil(room(pending.length)))) await submitChunk(pending);
    while (progress.jobsInFlight > 0) {
      await refresh();
      if (progress.jobsInFlight > 0) await sleep(settings.pollMs);
    }
    control.log.debug({ completed: progress.completed, failed: progress.failed }, 'batch jobs done');
  }

  return { submitAndWatch };
}
