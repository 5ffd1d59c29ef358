import { DATATYPES, DataTypes, encodeBytesElements, type RawTensor } from '@inferq/contracts';
import { InferenceSession } from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { runSessionBatch } from './run-batch.ts';
import { batchSumModel, gatherModel, identityModel } from './testing/test-models.ts';

const f32 = (name: string, shape: number[], values: number[]): RawTensor => ({
  name,
  datatype: 'FP32',
  shape,
  data: new Uint8Array(new Float32Array(values).buffer),
});
const i64 = (name: string, values: number[]): RawTensor => ({
  name,
  datatype: 'INT64',
  shape: [values.length],
  data: new Uint8Array(new BigInt64Array(values.map(BigInt)).buffer),
});
const floats = (t: RawTensor): number[] => Array.from(new Float32Array(t.data.slice().buffer));
const outputsOf = (r: { ok: boolean; outputs?: RawTensor[] }): RawTensor[] => {
  expect(r.ok).toBe(true);
  return r.outputs!;
};

describe('runSessionBatch', () => {
  it.each(DATATYPES)('passes %s bytes through onnxruntime unchanged, batched', async (datatype) => {
    const session = await InferenceSession.create(identityModel(datatype));
    // BYTES: strings of different lengths (empty, multi-byte UTF-8), framed.
    const strings = (n: number, seed: number) => Array.from({ length: n }, (_, i) => (i === 0 ? '' : `${seed}:${'é'.repeat(i)}`));
    const bytes = DataTypes[datatype].bytes ?? 0;
    // Distinct bytes per job; BOOL must hold 0/1 and FP16 bit patterns must not be NaN to compare bytes exactly.
    const job = (rows: number, seed: number): RawTensor[] => {
      if (datatype === 'BYTES') return [{ name: 'X', datatype, shape: [rows, 2], data: encodeBytesElements(strings(rows * 2, seed)) }];
      const data = new Uint8Array(rows * 2 * bytes).map((_, i) => (datatype === 'BOOL' ? (i + seed) % 2 : (i * 3 + seed) % 61));
      return [{ name: 'X', datatype, shape: [rows, 2], data }];
    };
    const jobs = [job(1, 1), job(3, 2)];
    const result = await runSessionBatch(session, jobs);
    expect(result.fallbackReason).toBeUndefined();
    expect(result.mode).toBe('batched');
    result.results.forEach((r, j) => {
      const [y] = outputsOf(r);
      expect(y!.datatype).toBe(datatype);
      expect(y!.shape).toEqual(jobs[j]![0]!.shape);
      expect(Array.from(y!.data)).toEqual(Array.from(jobs[j]![0]!.data));
    });
    await session.release();
  });

  it('reads views at an offset into a larger buffer, aligned or not', async () => {
    const session = await InferenceSession.create(identityModel('FP32'));
    const backing = new Uint8Array(1 + 8 + 7 + 8);
    backing.set(new Uint8Array(new Float32Array([1.5, -2]).buffer), 1);
    backing.set(new Uint8Array(new Float32Array([3, 4]).buffer), 16);
    const view = (offset: number): RawTensor[] => [{ name: 'X', datatype: 'FP32', shape: [1, 2], data: backing.subarray(offset, offset + 8) }];
    for (const jobs of [[view(1)], [view(16)], [view(1), view(16)]]) {
      const result = await runSessionBatch(session, jobs);
      expect(result.results.map((r) => floats(outputsOf(r)[0]!))).toEqual(jobs.map((j) => (j[0]!.data.byteOffset === 1 ? [1.5, -2] : [3, 4])));
    }
  });

  it('fails jobs with invalid inputs alone, before running the rest batched', async () => {
    const session = await InferenceSession.create(identityModel('FP32'));
    const good = [f32('X', [1, 2], [1, 2])];
    const result = await runSessionBatch(session, [
      good,
      [f32('X', [1, 2], [1, 2, 3])],
      [],
      [{ ...i64('X', [1, 2]), shape: [1, 2] }],
      [f32('X', [1, 3], [1, 2, 3])],
      [...good, f32('extra', [1], [0])],
      [f32('X', [1, 2], [3, 4])],
    ]);
    expect(result.fallbackReason).toBeUndefined();
    expect(result.mode).toBe('batched');
    expect(result.results.map((r) => (r.ok ? 'ok' : r.code))).toEqual([
      'ok',
      'INPUT_DATA_INVALID',
      'INPUT_DATA_INVALID',
      'INPUT_DATA_INVALID',
      'INPUT_DATA_INVALID',
      'INPUT_DATA_INVALID',
      'ok',
    ]);
    expect(result.results.map((r) => (r.ok ? '' : r.message))).toEqual([
      '',
      expect.stringMatching(/12 bytes/),
      expect.stringMatching(/"X" is missing/),
      expect.stringMatching(/model expects FP32/),
      expect.stringMatching(/model expects \[N,2\]/),
      expect.stringMatching(/"extra" is not an input/),
      '',
    ]);
    expect(floats(outputsOf(result.results[6]!)[0]!)).toEqual([3, 4]);
  });

  it('runs jobs one by one when the batched run throws, so only the bad job fails', async () => {
    const session = await InferenceSession.create(gatherModel());
    const result = await runSessionBatch(session, [[i64('I', [0, 1])], [i64('I', [9])], [i64('I', [3])]]);
    expect(result.mode).toBe('single');
    expect(result.fallbackReason).toMatch(/indices|bounds|range/i);
    expect(floats(outputsOf(result.results[0]!)[0]!)).toEqual([0, 1, 10, 11]);
    expect(result.results[1]).toMatchObject({ ok: false, code: 'INFERENCE_FAILED' });
    expect(floats(outputsOf(result.results[2]!)[0]!)).toEqual([30, 31]);
    expect(result.inferMs).toBeGreaterThan(0);
  });

  it('runs jobs one by one when the outputs are not batch-aligned', async () => {
    const session = await InferenceSession.create(batchSumModel());
    const result = await runSessionBatch(session, [[f32('X', [2, 3], [1, 2, 3, 4, 5, 6])], [f32('X', [1, 3], [10, 20, 30])]]);
    expect(result.mode).toBe('single');
    expect(result.fallbackReason).toMatch(/expected dim 0 = 3/);
    expect(result.results.map((r) => floats(outputsOf(r)[0]!))).toEqual([
      [5, 7, 9],
      [10, 20, 30],
    ]);
  });

  it('runs jobs one by one when their non-batch dims differ', async () => {
    const session = await InferenceSession.create(identityModel('FP32', ['N', 'M']));
    const result = await runSessionBatch(session, [[f32('X', [1, 2], [1, 2])], [f32('X', [1, 3], [3, 4, 5])]]);
    expect(result.mode).toBe('single');
    expect(result.results.map((r) => floats(outputsOf(r)[0]!))).toEqual([
      [1, 2],
      [3, 4, 5],
    ]);
  });
});
