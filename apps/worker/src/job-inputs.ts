import { TypeCompiler } from '@sinclair/typebox/compiler';
import { InferJobPayloadSchema, type InferJobPayload, type RawTensor, type StoredTensor } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import { isNotFound, type Storage } from '@inferq/storage';

const payloadCheck = TypeCompiler.Compile(InferJobPayloadSchema);

/** Re-validates a queue payload with the same contract the API wrote it with (a compiled check: it runs per job). */
export function parseJobPayload(data: unknown): InferJobPayload {
  if (!payloadCheck.Check(data)) {
    const first = payloadCheck.Errors(data).First();
    throw new AppError('VALIDATION_FAILED', `queue payload is malformed at ${first?.path ?? '/'}: ${first?.message ?? 'invalid'}`);
  }
  return data;
}

/**
 * Inline base64 straight into a buffer of its own, which moves to the session
 * thread without a copy. The API validated the text strictly; the length
 * checks catch a payload damaged since.
 */
function decodeInline(b64: string, bytes: number): Uint8Array | undefined {
  const own = new Uint8Array(bytes);
  const written = Buffer.from(own.buffer).write(b64, 'base64');
  return written === bytes && b64.length === Math.ceil(bytes / 3) * 4 ? own : undefined;
}

async function loadTensor(t: StoredTensor, storage: Storage): Promise<RawTensor> {
  let data: Uint8Array | undefined;
  // A missing object fails the job for good; any other S3 error is retried.
  if (t.key) data = await storage.getObject(t.key).catch((err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err)));
  else if (t.b64 !== undefined) data = decodeInline(t.b64, t.bytes);
  if (!data || data.byteLength !== t.bytes) throw new AppError('INPUT_DATA_INVALID', `stored input "${t.name}" is missing or has the wrong size`);
  return { name: t.name, datatype: t.datatype, shape: t.shape, data };
}

/** Inline inputs are decoded; large ones are read from S3. */
export const loadJobInputs = (inputs: StoredTensor[], storage: Storage): Promise<RawTensor[]> => Promise.all(inputs.map((t) => loadTensor(t, storage)));
