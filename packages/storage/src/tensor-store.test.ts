import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { optionalTestVar, requiredTestVar } from '@inferq/test-utils';
import { createStorage, type Storage } from './s3-client.ts';
import { createTensorStore, isTensorNotFound, tensorKey, type TensorSlot } from './tensor-store.ts';

const INLINE_MAX_BYTES = 16;
const head = { name: 'x', datatype: 'UINT8' as const, shape: [1] };
const slot: TensorSlot = { jobId: 'j1', createdAt: new Date('2026-11-25T10:00:00Z'), kind: 'inputs' };
const bytes = (n: number) => new Uint8Array(randomBytes(n));
const collect = async (s: NodeJS.ReadableStream) => new Uint8Array(await buffer(s));

let storage: Storage;
beforeAll(async () => {
  storage = createStorage({
    endpoint: requiredTestVar('S3_ENDPOINT'),
    region: optionalTestVar('S3_REGION', 'us-east-1'),
    bucket: `tensors${randomBytes(4).toString('hex')}`,
    accessKeyId: optionalTestVar('S3_ACCESS_KEY_ID', ''),
    secretAccessKey: optionalTestVar('S3_SECRET_ACCESS_KEY', ''),
    forcePathStyle: true,
  });
  await storage.ensureBucket();
});
afterAll(() => storage.close());

describe('createTensorStore', () => {
  const store = () => createTensorStore({ storage, inlineMaxBytes: INLINE_MAX_BYTES });

  it('keeps tensors up to the limit inline (their bytes as they are, no base64) and larger ones in S3 under the slot key', async () => {
    const small = bytes(INLINE_MAX_BYTES);
    const large = bytes(INLINE_MAX_BYTES + 1);
    const [a, b] = await store().putTensors(slot, [
      { ...head, data: small },
      { ...head, data: large },
    ]);
    expect(a).toEqual({ ...head, bytes: small.byteLength, data: small });
    expect(a!.data).toBe(small);
    expect(b).toEqual({ ...head, bytes: large.byteLength, key: tensorKey(slot, 1) });
    expect(await storage.getObject(b!.key!)).toEqual(large);
    expect(await store().readTensor(a!)).toEqual(small);
    expect(await store().readTensor(b!)).toEqual(large);
  });

  it('writes inline tensors as base64 text when told to (INLINE_TENSOR_FORM=base64, for a fleet rolling from a release before 0022)', async () => {
    const small = bytes(10);
    const legacyWriter = createTensorStore({ storage, inlineMaxBytes: INLINE_MAX_BYTES, inlineForm: 'base64' });
    const [t] = await legacyWriter.putTensors(slot, [{ ...head, data: small }]);
    expect(t).toEqual({ ...head, bytes: 10, b64: Buffer.from(small).toString('base64') });
    expect(await store().readTensor(t!)).toEqual(small);
  });

  it("reads an inline tensor as a view of its row's bytes (no copy: a session's infer packs a batch's views), and a legacy row's base64", async () => {
    const row = bytes(12);
    const view = { ...head, bytes: 4, data: row.subarray(4, 8) };
    const read = await store().readTensor(view);
    expect(read).toEqual(row.subarray(4, 8));
    expect(read.buffer).toBe(row.buffer);
    expect(await collect(await store().readTensorStream(view))).toEqual(row.subarray(4, 8));
    const legacy = { ...head, bytes: 4, b64: Buffer.from(row.subarray(0, 4)).toString('base64') };
    expect(await store().readTensor(legacy)).toEqual(row.subarray(0, 4));
    expect(await collect(await store().readTensorStream(legacy))).toEqual(row.subarray(0, 4));
    expect(await store().locateTensor(legacy, 60)).toEqual({ data: row.subarray(0, 4) });
    // An inline tensor whose bytes are not there as recorded (no data, or too few).
    for (const bad of [
      { ...head, bytes: 4 },
      { ...view, bytes: 5 },
    ]) {
      const err = await store()
        .readTensor(bad)
        .catch((e: unknown) => e);
      expect(isTensorNotFound(err) && err.reason).toBe('wrong-size');
    }
  });

  it('streams a tensor of known length to S3, and inlines a small one', async () => {
    const outputs: TensorSlot = { ...slot, kind: 'outputs', batchId: 'b1' };
    const large = bytes(100_000);
    const stored = await store().putTensorStream(outputs, 0, head, Readable.from([large.subarray(0, 500), large.subarray(500)]), large.byteLength);
    expect(stored.key).toBe(tensorKey(outputs, 0));
    expect(await collect(await store().readTensorStream(stored))).toEqual(large);
    const small = bytes(8);
    const inline = await store().putTensorStream(outputs, 1, head, Readable.from([small]), small.byteLength);
    expect(inline.data).toEqual(small);
    expect(await collect(await store().readTensorStream(inline))).toEqual(small);
    await expect(store().putTensorStream(outputs, 2, head, Readable.from([small]), 9)).rejects.toThrow(RangeError);
  });

  it('copies S3 objects to the new slot and keeps inline tensors as they are', async () => {
    const [inline, object] = await store().putTensors(slot, [
      { ...head, data: bytes(4) },
      { ...head, data: bytes(40) },
    ]);
    const retry: TensorSlot = { ...slot, jobId: 'j2' };
    const [a, b] = await store().copyTensors(retry, [inline!, object!]);
    expect(a).toBe(inline);
    expect(b).toEqual({ ...object, key: tensorKey(retry, 1) });
    expect(await store().readTensor(b!)).toEqual(await store().readTensor(object!));
    expect(store().objectKeys([inline!, object!, b!])).toEqual([object!.key, b!.key]);
  });

  it('adopts an uploaded object: copied to the slot key when large, read in and inlined when small', async () => {
    const large = bytes(40);
    const small = bytes(8);
    await storage.putObject('uploads/large.bin', large);
    await storage.putObject('uploads/small.bin', small);
    const adopted = await store().adoptObject(slot, 3, head, 'uploads/large.bin', large.byteLength);
    expect(adopted).toEqual({ ...head, bytes: large.byteLength, key: tensorKey(slot, 3) });
    expect(await store().readTensor(adopted)).toEqual(large);
    const inline = await store().adoptObject(slot, 4, head, 'uploads/small.bin', small.byteLength);
    expect(inline).toEqual({ ...head, bytes: small.byteLength, data: small });
    // The source is the caller's to delete.
    expect(await storage.headObject('uploads/large.bin')).toEqual({ sizeBytes: large.byteLength });
    const err = await store()
      .adoptObject(slot, 5, head, 'uploads/none.bin', 40)
      .catch((e: unknown) => e);
    expect(isTensorNotFound(err) && err.reason).toBe('missing');
  });

  it('locates inline bytes and presigns objects', async () => {
    const [inline, object] = await store().putTensors(slot, [
      { ...head, data: bytes(4) },
      { ...head, data: bytes(40) },
    ]);
    expect(await store().locateTensor(inline!, 60)).toEqual({ data: inline!.data });
    const { url } = (await store().locateTensor(object!, 60)) as { url: string };
    expect(new Uint8Array(await (await fetch(url)).arrayBuffer())).toEqual(await store().readTensor(object!));
  });

  it('answers a typed not-found for a missing object or bytes of the wrong size', async () => {
    const missing = { ...head, bytes: 40, key: 'jobs/none.bin' };
    // Each started when awaited: one that rejected while an earlier one was awaited would count as unhandled.
    for (const read of [() => store().readTensor(missing), () => store().readTensorStream(missing), () => store().copyTensors(slot, [missing])]) {
      const err = await read().catch((e: unknown) => e);
      expect(isTensorNotFound(err) && err.reason).toBe('missing');
    }
    const err = await store()
      .readTensor({ ...head, bytes: 5, b64: 'AAAA' })
      .catch((e: unknown) => e);
    expect(isTensorNotFound(err) && err.reason).toBe('wrong-size');
  });

  it('reads, streams, locates and copies a tensor kept in its group’s segment; a missing segment or a short one is a typed not-found', async () => {
    const [a, b] = [bytes(300), bytes(500)];
    const ids = ['01a25000-0000-7000-8000-000000000001', '01a25000-0000-7000-8000-000000000002'];
    const [ta, tb] = (await store().segmentInputs([a, b].map((data, i) => ({ id: ids[i]!, inputs: [{ ...head, bytes: data.byteLength, data }] })))).map(
      (inputs) => inputs[0],
    );
    expect(tb!.data).toBeUndefined();
    expect(await store().readTensor(tb!)).toEqual(b);
    expect(await collect(await store().readTensorStream(ta!))).toEqual(a);
    expect(await store().locateTensor(tb!, 60)).toEqual({ data: b });
    // A retry's copy holds the bytes again, to go where the new job's inputs go.
    expect((await store().copyTensors(slot, [tb!]))[0]).toEqual({ ...head, bytes: 500, data: b });
    const missing = await store()
      .readTensor({ ...ta!, segment: `${'0'.repeat(32)}.${'0'.repeat(32)}` })
      .catch((err: unknown) => err);
    expect(isTensorNotFound(missing) && missing.reason).toBe('missing');
    for (const wrong of [
      { ...tb!, bytes: 501 },
      { ...tb!, offset: 5_000 },
    ]) {
      const err = await store()
        .readTensor(wrong)
        .catch((e: unknown) => e);
      expect(isTensorNotFound(err) && err.reason).toBe('wrong-size');
    }
  });
});
