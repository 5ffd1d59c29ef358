import { TypeCompiler } from '@sinclair/typebox/compiler';
import { InferJobPayloadSchema, type InferJobPayload, type RawTensor, type StoredTensor } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import { isTensorNotFound, type TensorStore } from '@inferq/storage';

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
export const loadJobInputs = (inputs: StoredTensor[], tensors: TensorStore): Promise<RawTensor[]> => Promise.all(inputs.map((t) => loadTensor(t, tensors)));
