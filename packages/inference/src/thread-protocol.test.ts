import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import type { RawTensor } from '@inferq/contracts';
import { listBuffers, ownBatchBuffers, postWithTransfer } from './thread-protocol.ts';

const tensor = (data: Uint8Array, datatype: RawTensor['datatype'] = 'UINT8'): RawTensor => ({ name: 'x', datatype, shape: [data.byteLength], data });

describe('ownBatchBuffers', () => {
  it("moves a tensor that owns its buffer as it is, and copies a batch's views into one buffer, each aligned", () => {
    const own = new Uint8Array([1, 2, 3]);
    const shared = Buffer.from([9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6]);
    const odd = shared.subarray(1, 4);
    const floats = shared.subarray(4, 12);
    const [a, b] = ownBatchBuffers([[tensor(own), tensor(odd)], [tensor(floats, 'FP32')]]);
    expect(a![0]!.data).toBe(own);
    const [packedOdd, packedFloats] = [a![1]!.data, b![0]!.data];
    expect([...packedOdd]).toEqual([8, 7, 6]);
    expect([...packedFloats]).toEqual([5, 4, 3, 2, 1, 0, 1, 2]);
    expect(packedOdd.buffer).toBe(packedFloats.buffer);
    expect(packedOdd.buffer).not.toBe(shared.buffer);
    // 8-byte offsets: a typed array of any element width views a packed tensor in place.
    expect(packedFloats.byteOffset % 8).toBe(0);
    expect(new Float32Array(packedFloats.buffer, packedFloats.byteOffset, 2)).toHaveLength(2);
    // The caller's bytes are left as they were; the batch moves two buffers, not three.
    expect([...shared.subarray(1, 4)]).toEqual([8, 7, 6]);
    expect(listBuffers([...a!, ...b!])).toHaveLength(2);
  });

  it("copies an empty view too: moving its larger buffer would detach another batch's bytes", () => {
    // One Redis reply chunk holding two batches' carried inputs: the first batch's only input is empty.
    const chunk = Buffer.alloc(16, 3);
    const first = ownBatchBuffers([[tensor(chunk.subarray(4, 4))]]);
    const { port1, port2 } = new MessageChannel();
    postWithTransfer(port1, first, listBuffers(first.flat()));
    receiveMessageOnPort(port2);
    port1.close();
    expect(first[0]![0]!.data.byteLength).toBe(0);
    expect(listBuffers(first.flat())).toEqual([]);
    // The second batch's bytes are still there to send.
    expect([...ownBatchBuffers([[tensor(chunk.subarray(8, 12))]])[0]![0]!.data]).toEqual([3, 3, 3, 3]);
  });

  it('returns the batch unchanged when every tensor owns its buffer', () => {
    const jobs = [[tensor(new Uint8Array(4))], [tensor(new Uint8Array(8))]];
    expect(ownBatchBuffers(jobs)).toBe(jobs);
  });

  it("posts a packed batch to another thread: every job's bytes arrive, and the packed buffer is moved, not copied", () => {
    const shared = Buffer.alloc(64, 7);
    const jobs = ownBatchBuffers([[tensor(shared.subarray(0, 12))], [tensor(shared.subarray(20, 30))]]);
    const { port1, port2 } = new MessageChannel();
    const moved = jobs[0]![0]!.data.buffer;
    postWithTransfer(port1, { jobs }, listBuffers(jobs.flat()));
    const received = receiveMessageOnPort(port2)!.message as { jobs: RawTensor[][] };
    expect(received.jobs.map((inputs) => inputs[0]!.data.byteLength)).toEqual([12, 10]);
    expect([...received.jobs[1]![0]!.data]).toEqual(new Array(10).fill(7));
    expect(moved.byteLength).toBe(0);
    port1.close();
  });
});
