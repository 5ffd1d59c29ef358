import { Readable } from 'node:stream';
import type { StoredTensor } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import type { TensorStore } from '@inferq/storage';
import type { Principal } from '../../keys/api-keys-service.ts';
import { streamDigest, tensorDigest, type DigestedTensor } from './input-hash.ts';
import type { JobSlot } from './submit-inputs.ts';
import { hasBytes, type DecodedInput } from './tensor-intake.ts';
import type { UploadClaims } from '../../uploads/upload-claims.ts';

export interface InputStorage {
  /** Each input's digest for the idempotency hash: an upload is named by its id (its bytes are not read). */
  requestDigests(inputs: readonly DecodedInput[]): DigestedTensor[];
  /** Each input's digest for the response cache; uploads are digested from where `stored` (from `store`) put them. */
  contentDigests(inputs: readonly DecodedInput[], stored?: readonly StoredTensor[]): Promise<DigestedTensor[]>;
  /** Places every input in the job's slot (index = position): bytes inline or in S3 (the tensor store decides), uploads claimed, streamed ones as they are. */
  store(principal: Principal, slot: JobSlot, inputs: readonly DecodedInput[]): Promise<StoredTensor[]>;
}

/**
 * The stored inputs with their bytes as this request holds them, for carrying beside the queue entry: those kept in S3
 * too (the worker then reads no object for them), not only inline ones. Undefined when one's bytes are not in hand
 * (an upload or a streamed input: reading it back to carry it would cost what carrying saves).
 */
export function withBytesInHand(stored: readonly StoredTensor[], inputs: readonly DecodedInput[]): StoredTensor[] | undefined {
  const carried: StoredTensor[] = [];
  for (const [i, t] of stored.entries()) {
    if (t.data !== undefined) carried.push(t);
    else if (inputs[i] && hasBytes(inputs[i]) && inputs[i].data.byteLength === t.bytes) carried.push({ ...t, data: inputs[i].data });
    else return undefined;
  }
  return carried;
}

const head = (t: DecodedInput) => ({ name: t.name, datatype: t.datatype, shape: t.shape });

export function createInputStorage(deps: { tensors: TensorStore; uploads: UploadClaims }): InputStorage {
  const memo = new WeakMap<Uint8Array, string>();
  const digestOf = (data: Uint8Array): string => {
    let d = memo.get(data);
    if (d === undefined) memo.set(data, (d = tensorDigest(data)));
    return d;
  };

  const storedDigest = async (tensor: StoredTensor): Promise<string> => streamDigest(await deps.tensors.readTensorStream(tensor));

  return {
    requestDigests: (inputs) =>
      inputs.map((t) => ({ ...head(t), sha256: hasBytes(t) ? digestOf(t.data) : 'stored' in t && t.stored ? t.sha256 : `upload:${String(t.upload)}` })),
    contentDigests: (inputs, stored) =>
      Promise.all(
        inputs.map(async (t, i) => ({
          ...head(t),
          sha256: hasBytes(t) ? digestOf(t.data) : 'stored' in t && t.stored ? t.sha256 : await storedDigest(stored![i]!),
        })),
      ),
    async store(principal, { jobId, createdAt }, inputs) {
      const slot = { jobId, createdAt, kind: 'inputs' as const };
      // The common case: every input's bytes are in hand, stored together.
      if (inputs.every(hasBytes)) return deps.tensors.putTensors(slot, inputs);
      return Promise.all(
        inputs.map(async (t, i) => {
          if (hasBytes(t))
            return deps.tensors.putTensorStream(slot, i, t, Readable.from([Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength)]), t.byteLength);
          if ('stored' in t && t.stored) return t.stored;
          return deps.uploads.claim(principal, String(t.upload), slot, i, head(t), t.byteLength);
        }),
      );
    },
  };
}
