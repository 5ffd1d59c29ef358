import { TypeCompiler } from '@sinclair/typebox/compiler';
import { decodeBase64, InferJobPayloadSchema, type InferJobPayload, type RawTensor, type StoredTensor } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import type { Storage } from '@inferq/storage';

const payloadCheck = TypeCompiler.Compile(InferJobPayloadSchema);

/** Re-validates a queue payload with the same contract the API wrote it with (a compiled check: it runs per job). */
export function parseJobPayload(data: unknown): InferJobPayload {
  if (!payloadCheck.Check(data)) {
    const first = payloadCheck.Errors(data).First();
    throw new AppError('VALIDATION_FAILED', `queue payload is malformed at ${first?.path ?? '/'}: ${first?.message ?? 'invalid'}`);
  }
  return data;
}

async function loadTensor(t: StoredTensor, storage: Storage): Promise<RawTensor> {
  let data: Uint8Array | undefined;
  if (t.key) data = await storage.getObject(t.key);
  else if (t.b64 !== undefined) data = decodeBase64(t.b64);
  if (!data || data.byteLength !== t.bytes) throw new AppError('INPUT_DATA_INVALID', `stored input "${t.name}" is missing or has the wrong size`);
  // Own, 8-byte aligned buffer: it is transferred to the session thread and viewed as typed arrays there.
  const own = new Uint8Array(data.byteLength);
  own.set(data);
  return { name: t.name, datatype: t.datatype, shape: t.shape, data: own };
}

/** Inline inputs are decoded; large ones are read from S3. */
export const loadJobInputs = (inputs: StoredTensor[], storage: Storage): Promise<RawTensor[]> =>
  Promise.all(inputs.map((t) => loadTensor(t, storage)));
