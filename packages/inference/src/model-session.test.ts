import type { RawTensor } from '@inferq/contracts';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openModelSession, type ModelSession, type OpenModelSessionOptions } from './model-session.ts';
import { toOrtTensor } from './ort-tensors.ts';
import { heavyModel, linearModel, mixedTypesModel, patternValues } from './testing/test-models.ts';

let dir: string;
const paths: Record<string, string> = {};
const opened: ModelSession[] = [];

async function open(options: Partial<OpenModelSessionOptions> & { modelPath: string }): Promise<ModelSession> {
  const session = await openModelSession({ device: 'cpu', ...options });
  opened.push(session);
  return session;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'inferq-inference-'));
  const models = { linear: linearModel(), mixed: mixedTypesModel(), heavy: heavyModel(512, 32), corrupt: new Uint8Array([8, 1, 0x12, 0xff, 0xff, 1, 2, 3]) };
  for (const [name, bytes] of Object.entries(models)) {
    paths[name] = join(dir, `${name}.onnx`);
    await writeFile(paths[name]!, bytes);
  }
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

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
const copyJob = (inputs: RawTensor[]): RawTensor[] => inputs.map((t) => ({ ...t, data: t.data.slice() }));

/** The same inputs through an onnxruntime session in this process, as bytes per output name. */
async function runDirect(session: InferenceSession, inputs: RawTensor[]): Promise<Record<string, Tensor>> {
  return (await session.run(Object.fromEntries(inputs.map((t) => [t.name, toOrtTensor(t)])))) as Record<string, Tensor>;
}

/** Counts 1 ms timer ticks and the longest gap between them while `run` is in flight. */
async function watchEventLoop(run: () => Promise<void>): Promise<{ ticks: number; maxGapMs: number; elapsedMs: number }> {
  let ticks = 0;
  let maxGapMs = 0;
  const started = performance.now();
  let last = started;
  const interval = setInterval(() => {
    const now = performance.now();
    maxGapMs = Math.max(maxGapMs, now - last);
    last = now;
    ticks++;
  }, 1);
  try {
    await run();
  } finally {
    clearInterval(interval);
  }
  const elapsedMs = performance.now() - started;
  return { ticks, maxGapMs: Math.max(maxGapMs, performance.now() - last), elapsedMs: Math.round(elapsedMs) };
}

function maxAbsDiff(actual: RawTensor, expected: Tensor): number {
  const a = actual.data.slice();
  const got = actual.datatype === 'INT64' ? Array.from(new BigInt64Array(a.buffer), Number) : Array.from(new Float32Array(a.buffer));
  const want = Array.from(expected.data as ArrayLike<number | bigint>, Number);
  expect(got).toHaveLength(want.length);
  return Math.max(0, ...got.map((v, i) => Math.abs(v - want[i]!)));
}

describe('openModelSession', () => {
  it('runs a batch of jobs with mixed item counts in one run, matching a direct onnxruntime run per job', async () => {
    const session = await open({ modelPath: paths.linear! });
    expect(session).toMatchObject({ provider: 'cpu', failedProviders: [], inputNames: ['X'], outputNames: ['Y'] });
    const jobs = [1, 3, 2, 1, 4].map((rows, j) => [f32('X', [rows, 4], patternValues(rows * 4, j + 2))]);
    const expected = jobs.map(copyJob);
    const result = await session.infer(jobs.map((inputs) => ({ inputs })));
    expect(result.mode).toBe('batched');
    expect(result.results).toHaveLength(5);
    const direct = await InferenceSession.create(paths.linear!);
    for (const [j, r] of result.results.entries()) {
      if (!r.ok) throw new Error(r.message);
      expect(r.outputs[0]).toMatchObject({ name: 'Y', datatype: 'FP32', shape: [expected[j]![0]!.shape[0], 3] });
      expect(maxAbsDiff(r.outputs[0]!, (await runDirect(direct, expected[j]!)).Y!)).toBeLessThanOrEqual(1e-6);
    }
    await direct.release();
  });

  it('batches a model with two inputs of different datatypes (FP32 and INT64)', async () => {
    const session = await open({ modelPath: paths.mixed! });
    const jobs = [2, 1, 3, 1, 2].map((rows, j) => [
      f32('A', [rows, 3], patternValues(rows * 3, j + 1)),
      i64(
        'B',
        [rows, 3],
        Array.from({ length: rows * 3 }, (_, i) => i * (j + 1) - 4),
      ),
    ]);
    const expected = jobs.map(copyJob);
    const result = await session.infer(jobs.map((inputs) => ({ inputs })));
    expect(result.mode).toBe('batched');
    const direct = await InferenceSession.create(paths.mixed!);
    for (const [j, r] of result.results.entries()) {
      if (!r.ok) throw new Error(r.message);
      const want = await runDirect(direct, expected[j]!);
      expect(r.outputs.map((o) => o.datatype)).toEqual(['FP32', 'INT64']);
      expect(maxAbsDiff(r.outputs[0]!, want.S!)).toBeLessThanOrEqual(1e-6);
      expect(maxAbsDiff(r.outputs[1]!, want.D!)).toBe(0);
    }
    await direct.release();
  });

  it('fails a job whose bytes are the wrong length alone; the others succeed', async () => {
    const session = await open({ modelPath: paths.linear! });
    const bad = { ...f32('X', [2, 4], patternValues(8)), data: new Uint8Array(20) };
    const result = await session.infer([{ inputs: [f32('X', [1, 4], [1, 2, 3, 4])] }, { inputs: [bad] }, { inputs: [f32('X', [2, 4], patternValues(8))] }]);
    expect(result.results.map((r) => r.ok)).toEqual([true, false, true]);
    expect(result.results[1]).toMatchObject({ ok: false, code: 'INPUT_DATA_INVALID', message: expect.stringMatching(/20 bytes/) });
  });

  it('moves whole input buffers to the thread and copies views over part of a buffer', async () => {
    const session = await open({ modelPath: paths.linear! });
    const whole = f32('X', [1, 4], [1, 2, 3, 4]);
    const shared = new Uint8Array(64);
    const part: RawTensor = { name: 'X', datatype: 'FP32', shape: [1, 4], data: shared.subarray(16, 32) };
    const result = await session.infer([{ inputs: [whole] }, { inputs: [part] }]);
    expect(result.results.every((r) => r.ok)).toBe(true);
    expect(whole.data.byteLength).toBe(0);
    expect(shared.byteLength).toBe(64);
  });

  it('serialises concurrent batches and answers each with its own results', async () => {
    const session = await open({ modelPath: paths.linear! });
    const runs = [1, 2, 3].map((rows) => session.infer([{ inputs: [f32('X', [rows, 4], patternValues(rows * 4))] }]));
    const shapes = (await Promise.all(runs)).map((r) => (r.results[0]!.ok ? r.results[0]!.outputs[0]!.shape : []));
    expect(shapes).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
  });

  it('ends on cpu when webgpu cannot start, listing webgpu and why', async () => {
    const session = await open({ modelPath: paths.linear!, device: 'webgpu:0', providers: ['webgpu', 'cpu'] });
    // A machine with a WebGPU adapter keeps webgpu; this one (no GPU) falls back.
    if (session.provider === 'webgpu') return;
    expect(session.provider).toBe('cpu');
    expect(session.failedProviders).toEqual([{ provider: 'webgpu', reason: expect.stringMatching(/adapter|webgpu/i) }]);
  });

  it('says where the nodes ran: every node on a CPU session, counted by a placement run when asked', async () => {
    const plain = await open({ modelPath: paths.linear! });
    expect(plain).toMatchObject({ provider: 'cpu', placement: 'cpu: every node (a CPU session)', providerPairing: undefined });
    const counted = await open({ modelPath: paths.mixed!, placementRun: 'always' });
    expect(counted.placement).toMatch(/^CPUExecutionProvider: all \d+ nodes$/);
    // The placement run leaves the session as it was: a batch after it runs as ever.
    const result = await plain.infer([{ inputs: [f32('X', [1, 4], [1, 2, 3, 4])] }]);
    expect(result.results[0]!.ok).toBe(true);
  });

  it('does not try cuda where no CUDA provider sits beside the core, and says so', async () => {
    const session = await open({ modelPath: paths.linear!, device: 'cuda:0' });
    // A machine with the provider installed says how it paired instead.
    if (session.provider === 'cuda') return expect(session.providerPairing).toMatch(/^core \d+\.\d+\.\d+ with cuda provider/);
    expect(session.provider).toBe('cpu');
    expect(session.failedProviders).toEqual([
      { provider: 'cuda', reason: expect.stringMatching(/^no libonnxruntime_providers_cuda\.so beside onnxruntime-node/) },
    ]);
  });

  it('rejects with MODEL_LOAD_FAILED for a corrupt or missing model file', async () => {
    const corrupt = await openModelSession({ modelPath: paths.corrupt!, device: 'cpu' }).catch((e: unknown) => e);
    expect(corrupt).toMatchObject({ code: 'MODEL_LOAD_FAILED', failedProviders: [{ provider: 'cpu', reason: expect.any(String) }] });
    expect((corrupt as Error).message).toMatch(/could not be loaded on any execution provider \(cpu: .+\)/);
    const missing = await openModelSession({ modelPath: join(dir, 'nope.onnx'), device: 'cuda:0' }).catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: 'MODEL_LOAD_FAILED', message: expect.stringMatching(/nope\.onnx cannot be read: ENOENT/) });
  });

  it('rejects an invalid device with a plain error before starting a thread', async () => {
    await expect(openModelSession({ modelPath: paths.linear!, device: 'gpu' })).rejects.toThrow(/invalid device "gpu"/);
  });

  it('refuses batches after close, and close is idempotent', async () => {
    const session = await openModelSession({ modelPath: paths.linear!, device: 'cpu' });
    await Promise.all([session.close(), session.close()]);
    await expect(session.infer([{ inputs: [f32('X', [1, 4], [1, 2, 3, 4])] }])).rejects.toThrow(/closed/);
  });

  it('keeps the main event loop responsive while a heavy batch runs', async () => {
    const session = await open({ modelPath: paths.heavy!, intraOpNumThreads: 1 });
    const makeJobs = () => [512, 512, 512, 512].map((rows, j) => ({ inputs: [f32('X', [rows, 512], patternValues(rows * 512, j + 1))] }));
    const jobs = makeJobs();
    await session.infer(makeJobs().slice(0, 1)); // warm-up: first-run allocations are not the point here
    let inferMs = 0;
    const threaded = await watchEventLoop(async () => {
      const result = await session.infer(jobs);
      expect(result.results.every((r) => r.ok)).toBe(true);
      inferMs = result.inferMs;
    });
    // Control: the same run on this thread starves the timer, so the measurement can see blocking.
    const direct = await InferenceSession.create(paths.heavy!, { intraOpNumThreads: 1 });
    const stacked = f32('X', [2048, 512], patternValues(2048 * 512, 1));
    const blocked = await watchEventLoop(async () => void (await runDirect(direct, [stacked])));
    await direct.release();
    console.info('event loop during a heavy batch', { inferMs, threaded, blocked });
    expect(inferMs).toBeGreaterThan(50);
    // Against its own run: on a loaded machine the two runs can take very different times.
    expect(blocked.maxGapMs).toBeGreaterThan(blocked.elapsedMs / 2);
    expect(threaded.maxGapMs).toBeLessThan(inferMs / 4);
    expect(threaded.ticks).toBeGreaterThan(threaded.elapsedMs / 10);
  });
});
