import DataLoader from 'dataloader';
import type { StoredTensor } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import { deleteJobs, insertJobs, type NewJob, type Pool } from '@inferq/db';
import { enqueueRequestFor, writeOutcomeUnknown, type JobProducer } from '@inferq/queue';
import type { RecentAccepts } from './recent-accepts.ts';

/** What a job's queue entry takes besides the job (enqueueRequestFor). */
interface QueueEntryOptions {
  /** The submitting request's trace context. */
  traceContext?: Record<string, string>;
  /** The submitting key's fair-share weight. */
  weight?: number;
  /** Inputs, with their bytes, the entry carries (carriesInputs). */
  carry?: readonly StoredTensor[];
}

interface Submission {
  job: NewJob;
  queue: QueueEntryOptions;
}

export interface JobIntake {
  /**
   * Records the job in Postgres, then queues it (invariant 1). Resolves false
   * when an equal idempotency key won the insert; rejects with
   * QUEUE_UNAVAILABLE (the row removed again) when Redis cannot take it. When
   * the enqueue was sent but never answered (a silent link), the job may be in
   * the queue: it is accepted, and the reconciler enqueues it if it is not. So is one whose write is not answered
   * within `queueTimeoutMs` (SUBMIT_QUEUE_TIMEOUT_MS). A submit so waits at most two of those for the queue: the
   * commit in flight when it came, then its own group's.
   * `queue`: what travels in the queue job besides the job.
   */
  accept(job: NewJob, queue?: QueueEntryOptions): Promise<boolean>;
}

/** The queue write was sent and not answered in time: it may have been applied (writeOutcomeUnknown). */
class QueueWriteTimeoutError extends Error {
  constructor(ms: number) {
    super(`the queue write was not answered within ${ms} ms`);
    this.name = 'QueueWriteTimeoutError';
  }
}

interface JobIntakeDeps {
  pool: Pool;
  producer: JobProducer;
  maxGroupSize: number;
  queueTimeoutMs: number;
  /** Told of every job accepted, to check against the record after a failover (recent-accepts.ts). */
  recent?: RecentAccepts;
  /** INPUT_SEGMENTS: moves a group's inline input bytes into one segment object (the tensor store's segmentInputs); unset: they stay in the rows. */
  segmentInputs?(jobs: ReadonlyArray<{ id: string; inputs: readonly StoredTensor[] }>): Promise<StoredTensor[][]>;
  /** Told of each segment written, or not written (`err`: the group's inputs went into its rows instead). */
  onSegment?(jobs: number, err?: unknown): void;
}

/**
 * Group commit for submissions, one for interactive work and one for the batch class. Jobs of requests that arrive
 * while a commit is in flight wait for it and then go together: one multi-row INSERT (one WAL flush) and one queue round
 * trip per model for the whole group, so the cost per 202 falls as concurrency rises instead of queueing on the
 * database. Batch-class submits (a Batch API file's lines, a client's bulk work) commit in groups of their own: an
 * interactive submit waits for its own kind's commit in flight, never behind a bulk group's insert, segment and queue
 * write.
 */
export function createJobIntake(deps: JobIntakeDeps): JobIntake {
  const interactive = createGroupCommit(deps);
  const bulk = createGroupCommit(deps);
  return { accept: (job, queue) => (job.priority === 'batch' ? bulk : interactive).accept(job, queue) };
}

function createGroupCommit(deps: JobIntakeDeps): JobIntake {
  let inFlight: Promise<unknown> = Promise.resolve();

  /**
   * The group's rows, their inline inputs moved into one segment: the record then holds where the bytes are, not the
   * bytes (no WAL for them). When the segment cannot be written (object storage down) the rows keep the bytes, as
   * without segments: a submit never waits on, or fails for, object storage that its inputs do not need.
   */
  async function placeInputs(jobs: NewJob[]): Promise<NewJob[]> {
    const inline = jobs.filter((j) => j.inputs.some((t) => t.data !== undefined));
    if (!deps.segmentInputs || inline.length === 0) return jobs;
    try {
      const rows = await deps.segmentInputs(inline);
      deps.onSegment?.(inline.length);
      const placed = new Map(inline.map((j, i) => [j, rows[i]!]));
      return jobs.map((j) => ({ ...j, inputs: placed.get(j) ?? j.inputs }));
    } catch (err) {
      deps.onSegment?.(inline.length, err);
      return jobs;
    }
  }

  /**
   * The group's queue write, given at most `queueTimeoutMs`: a write the driver keeps retrying (a Cluster shard
   * failing over holds its slot's commands) ends as an unanswered one, and the group is answered.
   */
  async function enqueue(requests: Parameters<JobProducer['enqueueJobs']>[0]): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const write = deps.producer.enqueueJobs(requests);
    try {
      await Promise.race([
        write,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new QueueWriteTimeoutError(deps.queueTimeoutMs)), deps.queueTimeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
      // Settled later, or never: nobody awaits it once the timeout has answered.
      write.catch(() => {});
    }
  }

  async function commit(submissions: readonly Submission[]): Promise<Array<boolean | Error>> {
    const jobs = submissions.map((s) => s.job);
    const inserted = await insertJobs(deps.pool, await placeInputs(jobs));
    const fresh = submissions.filter((s) => inserted.has(s.job.id));
    const accepted = () => {
      deps.recent?.note(fresh.map((s) => ({ id: s.job.id, model: s.job.modelName })));
      return jobs.map((j) => inserted.has(j.id));
    };
    try {
      await enqueue(fresh.map(({ job, queue }) => enqueueRequestFor(job, job.inputs, queue)));
    } catch (err) {
      // Perhaps queued: refusing it would make the client's retry a second job. Postgres holds it either way (invariant 1).
      if (writeOutcomeUnknown(err)) return accepted();
      // Not accepted after all: remove the rows so a retry does not run a job twice.
      await deleteJobs(
        deps.pool,
        fresh.map((s) => s.job.id),
      ).catch(() => {});
      const error = new AppError('QUEUE_UNAVAILABLE', 'the queue cannot be reached; retry shortly', { cause: err, headers: { 'retry-after': '2' } });
      return jobs.map(() => error);
    }
    return accepted();
  }

  const loader = new DataLoader<Submission, boolean>(
    (jobs) => {
      const run = commit(jobs);
      inFlight = run.catch(() => undefined);
      return run;
    },
    {
      cache: false,
      maxBatchSize: deps.maxGroupSize,
      // The next group starts when the previous commit ends; setImmediate lets
      // the requests read in the same I/O turn join it.
      batchScheduleFn: (dispatch) => void inFlight.then(() => setImmediate(dispatch)),
    },
  );
  return { accept: (job, queue = {}) => loader.load({ job, queue }) };
}
