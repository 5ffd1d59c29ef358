import { TypeCompiler } from '@sinclair/typebox/compiler';
import { InferJobPayloadSchema, type InferJobPayload, type RawTensor, type StoredTensor } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import { isTensorNotFound, type TensorStore } from '@inferq/storage';
import type { JobOutcome } from './batch-outcome.ts';
import { classifyError, isOutage } from './job-errors.ts';
import { outlastOutage, type StepScope } from './outlast-outage.ts';
import type { ClaimedJob, LoadedJob } from './pending-job.ts';

const payloadCheck = TypeCompiler.Compile(InferJobPayloadSchema);

/** Re-validates a queue payload with the same contract the API wrote it with (a compiled check: it runs per job). */
export function parseJobPayload(data: unknown): InferJobPayload {
  if (!payloadCheck.Check(data)) {
    const first = payloadCheck.Errors(data).First();
    throw new AppError('VALIDATION_FAILED', `queue payload is malformed at ${first?.path ?? '/'}: ${first?.message ?? 'invalid'}`);
  }
  return data;
}

async function loadTensor(t: StoredTensor, tensors: TensorStore): Promise<RawTensor> {
  // Bytes that are not there as recorded fail the job for good; any other S3 error is retried.
  const data = await tensors.readTensor(t).catch((err: unknown) => {
    throw isTensorNotFound(err) ? new AppError('INPUT_DATA_INVALID', `stored input "${t.name}" is missing or has the wrong size`) : err;
  });
  return { name: t.name, datatype: t.datatype, shape: t.shape, data };
}

/** Each input's bytes, in a buffer of its own that moves to the session thread without a copy. */
const loadJobInputs = (inputs: StoredTensor[], tensors: TensorStore): Promise<RawTensor[]> => Promise.all(inputs.map((t) => loadTensor(t, tensors)));

/**
 * Reads each claimed job's inputs (carried, inline, from their segment or S3: the tensor store fetches the segment
 * ranges asked for together in one GET a run); a job whose inputs cannot be read fails alone, but an unreachable S3 is
 * waited out. Returns the jobs read and the failures.
 */
export async function readBatchInputs(
  jobs: Array<{ job: ClaimedJob; inputs: StoredTensor[] }>,
  tensors: TensorStore,
  scope: StepScope,
): Promise<{ loaded: LoadedJob[]; failed: JobOutcome[] }> {
  const read = await outlastOutage('read inputs', scope, async () => {
    const settled = await Promise.allSettled(jobs.map(({ inputs }) => loadJobInputs(inputs, tensors)));
    const outage = settled.find((r) => r.status === 'rejected' && isOutage(r.reason));
    if (outage) throw (outage as PromiseRejectedResult).reason;
    return settled;
  });
  const loaded: LoadedJob[] = [];
  const failed: JobOutcome[] = [];
  jobs.forEach(({ job }, i) => {
    const r = read[i]!;
    if (r.status === 'fulfilled') loaded.push({ ...job, inputs: r.value });
    else failed.push({ kind: 'failed', job, error: classifyError(r.reason) });
  });
  return { loaded, failed };
}
