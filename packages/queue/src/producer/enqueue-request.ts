import { batchShapeKey, type Priority, type StoredTensor, type TensorHeader } from '@inferq/contracts';
import { packCarried } from './carried-inputs.ts';
import type { EnqueueRequest } from './job-producer.ts';

/** What a queue entry is made from: the job as Postgres records it (a new row, or one the reconciler found without its queue job). */
export interface JobForQueue {
  id: string;
  modelName: string;
  modelVersion: number;
  priority: Priority;
  ownerKeyId: string;
  deadlineAt: Date | null;
}

/**
 * The queue entry of a job: the one builder, for the API's intake and the
 * worker's reconciler alike. `inputs` give the batch key (jobs with equal
 * shapes may share a batch); `traceContext` is the submitting request's, and
 * `weight` its key's fair share. `carry`: inputs with their bytes to carry beside the
 * entry (carriesInputs, carried-inputs.ts): their headers in it, their bytes
 * in a key of their own; the worker's claim then does not read them from Postgres.
 */
export function enqueueRequestFor(
  job: JobForQueue,
  inputs: readonly TensorHeader[],
  from: { traceContext?: Record<string, string>; weight?: number; carry?: readonly StoredTensor[] } = {},
): EnqueueRequest {
  const carried = from.carry ? packCarried(from.carry) : undefined;
  return {
    jobId: job.id,
    model: job.modelName,
    priority: job.priority,
    tenant: job.ownerKeyId,
    ...(from.weight !== undefined ? { weight: from.weight } : {}),
    payload: {
      modelVersion: job.modelVersion,
      batchKey: batchShapeKey(inputs),
      priority: job.priority,
      ...(from.traceContext ? { traceContext: from.traceContext } : {}),
      ...(job.deadlineAt ? { deadlineAt: job.deadlineAt.getTime() } : {}),
      ...(carried ? { inputs: carried.headers } : {}),
    },
    ...(carried ? { carriedBytes: carried.bytes } : {}),
  };
}
