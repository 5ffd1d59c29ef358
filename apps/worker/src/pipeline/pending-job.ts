import type { Priority, RawTensor, StoredTensor } from '@inferq/contracts';
import type { JobAck } from '@inferq/queue';

/** A queue job held by the batcher until its batch has run and its outcome is stored; its inputs are read when the batch is claimed, unless it carries them. */
export interface PendingJob {
  jobId: string;
  model: string;
  modelVersion: number;
  priority: Priority;
  /** When the queue job was added. */
  createdAtMs: number;
  /** Attempts before this one (BullMQ's attemptsMade). */
  attemptsMade: number;
  maxAttempts: number;
  /** W3C trace context of the submitting request, when it was traced. */
  traceContext?: Record<string, string>;
  /** The job's deadline, epoch ms. */
  deadlineAt?: number;
  /** Headers of the inputs carried beside its queue entry (QUEUE_CARRIED_INPUTS_MB, carried-inputs.ts in packages/queue). */
  carriedInputs?: StoredTensor[];
  /** The queue job's handle (ack, fail or release): used once, by batch-completion.ts's `acknowledge`, after Postgres has the outcome. */
  ack: JobAck;
}

/** A job its batch has claimed: `attempt` is the attempt the batch runs, which fences its writes. */
export type ClaimedJob = PendingJob & { attempt: number; nodeFaults: string[] };
/** A claimed job with its inputs read. */
export type LoadedJob = ClaimedJob & { inputs: RawTensor[] };

export const isLastAttempt = (job: Pick<PendingJob, 'attemptsMade' | 'maxAttempts'>): boolean => job.attemptsMade + 1 >= job.maxAttempts;

/** Rows a job puts along the batch dimension. */
export const itemsOf = (job: LoadedJob): number => Math.max(1, job.inputs[0]?.shape[0] ?? 1);
