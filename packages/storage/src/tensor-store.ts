import { Readable } from 'node:stream';
import { encodeBase64, type StoredTensor } from '@inferq/contracts';
import { createSegmentReader, inSegment, writeSegment, type SegmentJob } from './input-segments.ts';
import { jobInputKey, jobOutputKey } from './keys.ts';
import { isNotFound, type Storage } from './s3-client.ts';

// The one place that decides where a job's tensor lives (inline bytes in its
// row, a range of its submit group's segment, or an S3 object: DESIGN
// invariant 5) and reads it back. Inline, a tensor carries its bytes (`data`;
// packages/db keeps them in the row's bytea and maps them back); rows written
// before migration 0022 hold base64 text (`b64`), decoded here at read.
// Nothing else looks at `.data`, `.b64`, `.key` or `.segment`.

/** A tensor's header: what the row keeps beside its bytes. */
export type TensorHead = Pick<StoredTensor, 'name' | 'datatype' | 'shape'>;

/** A tensor with its bytes in hand. */
export type TensorBytes = TensorHead & { data: Uint8Array };

/** Whose tensors these are: a job's inputs, or the outputs one batch computed for it (filed under the batch, `keys.ts`). */
export type TensorSlot = { jobId: string; createdAt: Date } & ({ kind: 'inputs' } | { kind: 'outputs'; batchId: string });

/** Where a stored tensor's bytes are: in hand (an inline one, or one read from its segment), or behind a presigned URL (one in S3). */
export type TensorLocation = { data: Uint8Array } | { url: string };

/** The stored bytes are not there as recorded: the object is missing, or it (or the inline text) is not the recorded size. */
export class TensorNotFoundError extends Error {
  override readonly name = 'TensorNotFoundError';
  constructor(
    readonly tensor: string,
    readonly reason: 'missing' | 'wrong-size',
  ) {
    super(`stored tensor "${tensor}" is ${reason === 'missing' ? 'missing' : 'not the size recorded'}`);
  }
}
export const isTensorNotFound = (err: unknown): err is TensorNotFoundError => err instanceof TensorNotFoundError;

export interface TensorStore {
  /** Stores each tensor (index = position): inline up to the limit, else an S3 object. Batch first; the rows keep what it returns. */
  putTensors(slot: TensorSlot, tensors: readonly TensorBytes[]): Promise<StoredTensor[]>;
  /** Stores a tensor that arrives as a stream of exactly `byteLength` bytes: streamed to S3 without holding it whole, or read in and kept inline when small. */
  putTensorStream(slot: TensorSlot, index: number, head: TensorHead, body: NodeJS.ReadableStream, byteLength: number): Promise<StoredTensor>;
  /**
   * The raw bytes: an ArrayBuffer of their own where they were read apart, a view where they are held in a larger buffer
   * (carried beside a queue entry, a pooled reply). A model session's `infer` copies views, a batch's into one buffer.
   */
  readTensor(tensor: StoredTensor): Promise<Uint8Array>;
  readTensorStream(tensor: StoredTensor): Promise<NodeJS.ReadableStream>;
  /** An inline tensor's bytes (a view, not to be transferred), or a presigned GET URL valid `urlTtlS` seconds. */
  locateTensor(tensor: StoredTensor, urlTtlS: number): Promise<TensorLocation>;
  /** The S3 objects these tensors are kept in (none for inline ones): what deleting them removes. */
  objectKeys(tensors: readonly StoredTensor[]): string[];
  /** The tensors as another job's (a retry): inline ones as they are, S3 objects copied so the new job does not depend on the old one's. */
  copyTensors(slot: TensorSlot, tensors: readonly StoredTensor[]): Promise<StoredTensor[]>;
  /**
   * Takes the object at `srcKey` (a client's upload, checked to hold `bytes` bytes) as tensor `index` of the slot: copied on the
   * server side to the slot's key, or read in and kept inline when small. The source object is left for the caller to delete.
   */
  adoptObject(slot: TensorSlot, index: number, head: TensorHead, srcKey: string, bytes: number): Promise<StoredTensor>;
  /**
   * Moves the inline bytes of a group of jobs' inputs into one segment object (input-segments.ts): each job's inputs,
   * in order, then name it and an offset instead of holding the bytes.
   */
  segmentInputs(jobs: readonly SegmentJob[]): Promise<StoredTensor[][]>;
}

export interface TensorStoreOptions {
  storage: Storage;
  /** INLINE_TENSOR_MAX_BYTES: tensors up to this size are kept in the row. */
  inlineMaxBytes: number;
  /**
   * How inline tensors are written (INLINE_TENSOR_FORM): `bytes` (kept as they are, in the row's bytea) or `base64` (text in
   * the jsonb, the form releases before migration 0022 read, for a fleet rolling from one). Both are read. @default 'bytes'
   */
  inlineForm?: InlineTensorForm;
}

export type InlineTensorForm = 'bytes' | 'base64';

const headOf = (t: TensorHead): TensorHead => ({ name: t.name, datatype: t.datatype, shape: t.shape });

export function tensorKey(slot: TensorSlot, index: number): string {
  return slot.kind === 'inputs' ? jobInputKey(slot.jobId, slot.createdAt, index) : jobOutputKey(slot.jobId, slot.createdAt, slot.batchId, index);
}

/** Strict decode of a legacy row's base64 straight into a buffer of its own: undefined when the text is not `bytes` bytes of base64. */
function decodeInline(b64: string, bytes: number): Uint8Array | undefined {
  if (b64.length !== Math.ceil(bytes / 3) * 4 || b64.includes('-') || b64.includes('_')) return undefined;
  const own = new Uint8Array(bytes);
  return Buffer.from(own.buffer).write(b64, 'base64') === bytes ? own : undefined;
}

/** A view that is its whole ArrayBuffer is kept; any other is copied (a pooled or shared buffer cannot be transferred). */

async function readAll(body: NodeJS.ReadableStream, byteLength: number, name: string): Promise<Uint8Array> {
  const out = new Uint8Array(byteLength);
  let at = 0;
  for await (const chunk of body as AsyncIterable<Uint8Array | string>) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (at + bytes.byteLength > byteLength) throw new RangeError(`tensor "${name}": the stream holds more than ${byteLength} bytes`);
    out.set(bytes, at);
    at += bytes.byteLength;
  }
  if (at !== byteLength) throw new RangeError(`tensor "${name}": the stream held ${at} bytes, not ${byteLength}`);
  return out;
}

/** An inline tensor's bytes: its own (a view of the row), or a legacy row's base64 decoded; exactly `bytes` long, else TensorNotFoundError. */
function inlineBytes(t: StoredTensor): Uint8Array {
  const data = t.data ?? (t.b64 === undefined ? undefined : decodeInline(t.b64, t.bytes));
  if (!data || data.byteLength !== t.bytes) throw new TensorNotFoundError(t.name, 'wrong-size');
  return data;
}

export function createTensorStore({ storage, inlineMaxBytes, inlineForm = 'bytes' }: TensorStoreOptions): TensorStore {
  const missingAs = (name: string) => (err: unknown) => Promise.reject(isNotFound(err) ? new TensorNotFoundError(name, 'missing') : err);
  const readSegment = createSegmentReader(storage);

  /** Bytes that are not in an S3 object of their own: inline, or a range of a segment. */
  async function heldBytes(t: StoredTensor): Promise<Uint8Array> {
    if (!inSegment(t)) return inlineBytes(t);
    const data = await readSegment(t).catch(missingAs(t.name));
    if (!data) throw new TensorNotFoundError(t.name, 'wrong-size');
    return data;
  }

  async function putTensor(slot: TensorSlot, index: number, t: TensorBytes): Promise<StoredTensor> {
    const head = { ...headOf(t), bytes: t.data.byteLength };
    if (t.data.byteLength <= inlineMaxBytes) return inlineForm === 'bytes' ? { ...head, data: t.data } : { ...head, b64: encodeBase64(t.data) };
    const key = tensorKey(slot, index);
    await storage.putObject(key, t.data);
    return { ...head, key };
  }

  async function putTensorStream(slot: TensorSlot, index: number, head: TensorHead, body: NodeJS.ReadableStream, byteLength: number) {
    if (byteLength <= inlineMaxBytes) return putTensor(slot, index, { ...headOf(head), data: await readAll(body, byteLength, head.name) });
    const key = tensorKey(slot, index);
    await storage.putObject(key, body, { contentLength: byteLength });
    return { ...headOf(head), bytes: byteLength, key };
  }

  /** Server-side copy (the bytes never pass through this process), or inline when small enough. */
  async function copyObjectTo(slot: TensorSlot, index: number, head: TensorHead, srcKey: string, bytes: number): Promise<StoredTensor> {
    if (bytes <= inlineMaxBytes) return putTensorStream(slot, index, head, await storage.getObjectStream(srcKey).catch(missingAs(head.name)), bytes);
    const key = tensorKey(slot, index);
    await storage.copyObject(srcKey, key).catch(missingAs(head.name));
    return { ...headOf(head), bytes, key };
  }

  return {
    putTensors: (slot, tensors) => Promise.all(tensors.map((t, i) => putTensor(slot, i, t))),
    putTensorStream,

    async readTensor(t) {
      if (!t.key) return heldBytes(t);
      const data = await storage.getObject(t.key).catch(missingAs(t.name));
      if (data.byteLength !== t.bytes) throw new TensorNotFoundError(t.name, 'wrong-size');
      return data;
    },

    async readTensorStream(t) {
      if (t.key) return storage.getObjectStream(t.key).catch(missingAs(t.name));
      const data = await heldBytes(t);
      // A Buffer is emitted whole (not byte by byte).
      return Readable.from(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    },

    async locateTensor(t, urlTtlS) {
      // A range of a segment has no URL of its own (a presigned GET cannot carry the Range header): its bytes are small.
      return t.key ? { url: await storage.presignGet(t.key, urlTtlS) } : { data: await heldBytes(t) };
    },

    objectKeys: (tensors) => tensors.flatMap((t) => (t.key ? [t.key] : [])),

    // A segment's range is read back in, to go where the new job's own inputs go: a segment lives only as long as its group's rows.
    copyTensors: (slot, tensors) =>
      Promise.all(
        tensors.map(async (t, i) => {
          if (t.key) return copyObjectTo(slot, i, t, t.key, t.bytes);
          return inSegment(t) ? { ...headOf(t), bytes: t.bytes, data: await heldBytes(t) } : t;
        }),
      ),

    adoptObject: copyObjectTo,

    segmentInputs: (jobs) => writeSegment(storage, jobs),
  };
}
