import { decodeBytesStrings, encodeBytesElements, type RawTensor } from '@inferq/contracts';
import { describe, expect, it } from 'vitest';
import { concatBatch, splitBatch } from './batch-tensors.ts';

const f32 = (name: string, shape: number[], values: number[]): RawTensor => ({
  name,
  datatype: 'FP32',
  shape,
  data: new Uint8Array(new Float32Array(values).buffer),
});
const i64 = (name: string, shape: number[], values: number[]): RawTensor => ({
  name,
  datatype: 'INT64',
  shape,
  data: new Uint8Array(new BigInt64Array(values.map(BigInt)).buffer),
});
const floats = (t: RawTensor): number[] => Array.from(new Float32Array(t.data.buffer, t.data.byteOffset, t.data.byteLength / 4));

describe('concatBatch', () => {
  it('stacks each named input along dim 0, in inputNames order, jobs carrying several items', () => {
    const jobs = [
      [i64('ids', [1, 2], [1, 2]), f32('x', [1, 2], [1, 2])],
      [f32('x', [2, 2], [3, 4, 5, 6]), i64('ids', [2, 2], [3, 4, 5, 6])],
    ];
    const [x, ids] = concatBatch(jobs, ['x', 'ids']);
    expect(x).toMatchObject({ name: 'x', datatype: 'FP32', shape: [3, 2] });
    expect(floats(x!)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(ids!.shape).toEqual([3, 2]);
    expect(Array.from(new BigInt64Array(ids!.data.buffer))).toEqual([1n, 2n, 3n, 4n, 5n, 6n]);
  });

  it("returns a single job's tensors without copying", () => {
    const x = f32('x', [2, 2], [1, 2, 3, 4]);
    expect(concatBatch([[x]], ['x'])[0]).toBe(x);
  });

  it('throws when the jobs cannot be stacked', () => {
    expect(() => concatBatch([[f32('x', [1, 2], [1, 2])], [f32('x', [1, 3], [1, 2, 3])]], ['x'])).toThrow(/shape \[1,3\]/);
    expect(() => concatBatch([[f32('x', [1, 2], [1, 2])], [i64('x', [1, 2], [1, 2])]], ['x'])).toThrow(/INT64/);
    expect(() => concatBatch([[f32('x', [1, 2], [1, 2])], [f32('x', [1, 2], [1, 2, 3])]], ['x'])).toThrow(/12 bytes/);
    expect(() => concatBatch([[f32('x', [1, 2], [1, 2])], [f32('y', [1, 2], [1, 2])]], ['x'])).toThrow(/no input "x"/);
    expect(() => concatBatch([[f32('x', [], [1])], [f32('x', [], [2])]], ['x'])).toThrow(/dim 0/);
    expect(() => concatBatch([], ['x'])).toThrow(/empty/);
  });
});

describe('splitBatch', () => {
  it("cuts every output by each job's item count as views over the same bytes", () => {
    const y = f32('y', [4, 2], [1, 2, 3, 4, 5, 6, 7, 8]);
    const z = i64('z', [4], [10, 20, 30, 40]);
    const perJob = splitBatch([y, z], [1, 3, 0]);
    expect(perJob).toHaveLength(3);
    const [first, second, empty] = perJob;
    expect(first!.map((t) => t.shape)).toEqual([[1, 2], [1]]);
    expect(second!.map((t) => t.shape)).toEqual([[3, 2], [3]]);
    expect(empty!.map((t) => t.shape)).toEqual([[0, 2], [0]]);
    expect(floats(second![0]!)).toEqual([3, 4, 5, 6, 7, 8]);
    expect(second![0]!.data.buffer).toBe(y.data.buffer);
    expect(second![0]!.data.byteOffset).toBe(8);
    expect(Array.from(new BigInt64Array(second![1]!.data.buffer, second![1]!.data.byteOffset, 3))).toEqual([20n, 30n, 40n]);
  });

  it('round-trips what concatBatch stacked', () => {
    const jobs = [[f32('x', [2, 1], [1, 2])], [f32('x', [1, 1], [3])], [f32('x', [3, 1], [4, 5, 6])]];
    const back = splitBatch(concatBatch(jobs, ['x']), [2, 1, 3]);
    expect(back.map((job) => floats(job[0]!))).toEqual([[1, 2], [3], [4, 5, 6]]);
  });

  it("throws when an output's dim 0 is not the jobs' total item count", () => {
    expect(() => splitBatch([f32('y', [1, 2], [1, 2])], [1, 1])).toThrow(/expected dim 0 = 2/);
    expect(() => splitBatch([f32('y', [], [1])], [1])).toThrow(/dim 0/);
  });
});

describe('BYTES tensors', () => {
  const text = (name: string, shape: number[], values: string[]): RawTensor => ({ name, datatype: 'BYTES', shape, data: encodeBytesElements(values) });
  const strings = (t: RawTensor): string[] => decodeBytesStrings(t.data);

  it('stacks the element lists of every job along dim 0 and cuts them back by rows of elements', () => {
    const jobs = [[text('s', [1, 2], ['a', ''])], [text('s', [2, 2], ['héllo', 'b', '日本', 'cc'])], [text('s', [1, 2], ['', 'z'])]];
    const stacked = concatBatch(jobs, ['s']);
    expect(stacked[0]!.shape).toEqual([4, 2]);
    expect(strings(stacked[0]!)).toEqual(['a', '', 'héllo', 'b', '日本', 'cc', '', 'z']);
    const back = splitBatch(stacked, [1, 2, 1]);
    expect(back.map((job) => job[0]!.shape)).toEqual([
      [1, 2],
      [2, 2],
      [1, 2],
    ]);
    expect(back.map((job) => strings(job[0]!))).toEqual(jobs.map((job) => strings(job[0]!)));
    expect(back[1]![0]!.data.buffer).toBe(stacked[0]!.data.buffer);
  });

  it('cuts a job with no rows, and rows with no elements', () => {
    const out = text('s', [2], ['x', 'y']);
    expect(splitBatch([out], [0, 2]).map((job) => strings(job[0]!))).toEqual([[], ['x', 'y']]);
    expect(splitBatch([text('e', [2, 0], [])], [1, 1]).map((job) => job[0]!.data.byteLength)).toEqual([0, 0]);
  });

  it('refuses a job whose framing does not hold its shape, or is not UTF-8', () => {
    const good = text('s', [1, 1], ['a']);
    expect(() => concatBatch([[good], [text('s', [2, 1], ['a'])]], ['s'])).toThrow(/job 1 .*BYTES/);
    const binary: RawTensor = { name: 's', datatype: 'BYTES', shape: [1, 1], data: encodeBytesElements([new Uint8Array([0xc3])]) };
    expect(() => concatBatch([[good], [binary]], ['s'])).toThrow(/job 1 BYTES element 0 is not valid UTF-8/);
  });
});
