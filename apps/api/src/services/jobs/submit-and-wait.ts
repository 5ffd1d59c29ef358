import { isErrorCode, isTerminalStatus, type JobAccepted, type RawTensor } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import type { JobRecord } from '@inferq/db';
import type { TensorStore } from '@inferq/storage';
import { ownerFilter } from '../keys/api-keys-service.ts';
import type { JobWaiter } from './view/job-waiter.ts';
import type { JobsService, SubmitJobInput } from './jobs-service.ts';

// The one way a protocol runs a job: submit (through the jobs service, so
// idempotency, quotas, the response cache and the rest apply alike), wait a
// bounded time, and read the outputs back. /v1 (`Prefer: wait`), /v2 infer and
// /v1/embeddings translate their wire format onto it and nothing else.

/** A job waited on: the row as last read, and its outputs on request. */
export interface WaitedJob {
  accepted: JobAccepted;
  job: JobRecord;
  /** Whether the job ended (succeeded, failed, canceled, expired) within the wait. */
  ended: boolean;
  /** A succeeded job's outputs (only those named, in the job's order) as raw bytes; S3 objects are read only here. */
  readOutputs(names?: ReadonlySet<string>): Promise<RawTensor[]>;
}

export interface SubmitAndWait {
  /** The longest wait a caller gets: `requestedS` bounded by WAIT_MAX_S (WAIT_MAX_S when not asked). */
  waitSeconds(requestedS?: number): number;
  /** Submits one job without waiting. */
  submit(input: SubmitJobInput): Promise<JobAccepted>;
  /**
   * Fails fast with MODEL_UNAVAILABLE, submitting nothing, when no live worker
   * serves a model (nothing would end the wait); else submits every job and
   * waits for all of them at most `waitS` seconds.
   */
  submitAndWait(inputs: readonly SubmitJobInput[], waitS: number): Promise<WaitedJob[]>;
  /** One job: `submitAndWait` with one input. */
  submitAndWaitOne(input: SubmitJobInput, waitS: number): Promise<WaitedJob>;
}

export interface SubmitAndWaitDeps {
  jobs: Pick<JobsService, 'submitJob'>;
  waiter: Pick<JobWaiter, 'prepare' | 'waitForJob'>;
  tensors: Pick<TensorStore, 'readTensor'>;
  /** WAIT_MAX_S. */
  waitMaxS: number;
  /** Told of each job submitted: the model's name (not its version) and priority. */
  onJobSubmitted(model: string, priority: SubmitJobInput['priority']): void;
}

/** A succeeded job's outputs (only those named, in the job's order) as raw bytes; nothing for any other job. S3 objects are read here. */
export const outputReader =
  (job: JobRecord, tensors: Pick<TensorStore, 'readTensor'>) =>
  (names?: ReadonlySet<string>): Promise<RawTensor[]> => {
    const stored = job.status === 'succeeded' ? (job.outputs ?? []).filter((t) => !names || names.has(t.name)) : [];
    return Promise.all(stored.map(async (t) => ({ name: t.name, datatype: t.datatype, shape: t.shape, data: await tensors.readTensor(t) })));
  };

export function createSubmitAndWait(deps: SubmitAndWaitDeps): SubmitAndWait {
  async function submit(input: SubmitJobInput): Promise<JobAccepted> {
    const accepted = await deps.jobs.submitJob(input);
    deps.onJobSubmitted(input.model.split(':')[0]!, input.priority);
    return accepted;
  }

  const toWaited = (accepted: JobAccepted, job: JobRecord): WaitedJob => ({
    accepted,
    job,
    ended: isTerminalStatus(job.status),
    readOutputs: outputReader(job, deps.tensors),
  });

  async function submitAndWait(inputs: readonly SubmitJobInput[], waitS: number): Promise<WaitedJob[]> {
    for (const model of new Set(inputs.map((i) => i.model))) await deps.waiter.prepare(model);
    const accepted = await Promise.all(inputs.map(submit));
    return Promise.all(accepted.map(async (a, i) => toWaited(a, await deps.waiter.waitForJob(a.id, ownerFilter(inputs[i]!.principal), waitS * 1000))));
  }

  return {
    waitSeconds: (requestedS) => Math.min(requestedS ?? deps.waitMaxS, deps.waitMaxS),
    submit,
    submitAndWait,
    submitAndWaitOne: async (input, waitS) => (await submitAndWait([input], waitS))[0]!,
  };
}

/** A job that ended without outputs, as the error the caller gets: the catalogue status of its code (400 for bad input data, 5xx for the rest). */
function jobFailure(job: JobRecord): AppError {
  if (job.status === 'canceled') return new AppError('INFERENCE_FAILED', `job ${job.id} was canceled before it ran`);
  const code = isErrorCode(job.errorCode) && job.errorCode !== 'INTERNAL' ? job.errorCode : 'INFERENCE_FAILED';
  return new AppError(code, `job ${job.id} ${job.status}: ${job.errorMessage ?? job.errorCode ?? 'no reason recorded'}`);
}

/**
 * For protocols that answer only with outputs (/v2 infer, embeddings): every
 * job succeeded, else 504 INFERENCE_TIMEOUT naming the first still unfinished
 * (`Location`), else the first failure.
 */
export function requireSucceeded(waited: readonly WaitedJob[], waitS: number): void {
  const unfinished = waited.find((w) => !w.ended)?.job;
  if (unfinished) {
    const of = waited.length > 1 ? ` (of ${waited.length})` : '';
    throw new AppError(
      'INFERENCE_TIMEOUT',
      `job ${unfinished.id}${of} is still ${unfinished.status} after ${waitS} s; poll /v1/jobs/${unfinished.id} for its result`,
      { headers: { location: `/v1/jobs/${unfinished.id}` } },
    );
  }
  const failed = waited.find((w) => w.job.status !== 'succeeded');
  if (failed) throw jobFailure(failed.job);
}
