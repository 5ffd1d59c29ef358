import { describe, expect, it } from 'vitest';
import type { TensorSpec } from '@inferq/contracts';
import { buildWarmupInputs, warmUpSession } from './model-warmup.ts';

const spec = (name: string, datatype: string, shape: number[]) => ({ name, datatype, shape }) as TensorSpec;

describe('model warm-up', () => {
  it('builds zero-filled inputs with dynamic dims as 1', () => {
    const built = buildWarmupInputs({ inputs: [spec('ids', 'INT64', [-1, -1]), spec('img', 'FP16', [-1, 3, 2, 2]), spec('scale', 'FP32', [])] });
    expect(built).toEqual({
      ok: true,
      inputs: [
        { name: 'ids', datatype: 'INT64', shape: [1, 1], data: new Uint8Array(8) },
        { name: 'img', datatype: 'FP16', shape: [1, 3, 2, 2], data: new Uint8Array(24) },
        { name: 'scale', datatype: 'FP32', shape: [], data: new Uint8Array(4) },
      ],
    });
  });

  it('fills strings with empty elements (zero lengths); an unknown datatype or a model without inputs has nothing to run', () => {
    expect(buildWarmupInputs({ inputs: [spec('text', 'BYTES', [-1, 2])] })).toEqual({
      ok: true,
      inputs: [{ name: 'text', datatype: 'BYTES', shape: [1, 2], data: new Uint8Array(8) }],
    });
    expect(buildWarmupInputs({ inputs: [spec('x', 'FP32', [1]), spec('c', 'COMPLEX64', [-1])] })).toEqual({
      ok: false,
      reason: 'input "c" is COMPLEX64, which cannot be zero-filled',
    });
    expect(buildWarmupInputs({ inputs: [] })).toMatchObject({ ok: false });
  });

  it('tells a failed run (session still usable) from a dead session', async () => {
    const signature = { inputs: [spec('x', 'FP32', [-1, 2])] };
    const failedRun = {
      infer: async () => ({ inferMs: 1, mode: 'single' as const, results: [{ ok: false as const, code: 'INFERENCE_FAILED' as const, message: 'bad' }] }),
    };
    expect(await warmUpSession(failedRun, signature)).toMatchObject({ status: 'run-failed', reason: 'INFERENCE_FAILED: bad' });
    expect(await warmUpSession({ infer: () => Promise.reject(new Error('gone')) }, signature)).toEqual({ status: 'session-failed', reason: 'gone' });
    expect(await warmUpSession({ infer: () => Promise.reject(new Error('never called')) }, { inputs: [spec('t', 'COMPLEX64', [1])] })).toMatchObject({
      status: 'skipped',
    });
  });
});
