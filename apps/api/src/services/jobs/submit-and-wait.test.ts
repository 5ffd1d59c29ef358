import { describe, expect, it, vi } from 'vitest';
import type { StoredTensor } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import type { JobRecord } from '@inferq/db';
import type { Principal } from '../keys/api-keys-service.ts';
import type { SubmitJobInput } from './jobs-service.ts';
import { createSubmitAndWait, requireSucceeded } from './submit-and-wait.ts';

// The seam alone, over stand-ins: what it calls, in which order, and which tensors it reads.

const principal: Principal = { keyId: 'k1', scopes: [], isAdmin: false, rateLimitPerMin: null, weight: 1 };
const request = (model: string): SubmitJobInput => ({ principal, model, inputs: [], priority: 'high', metadata: {}, idempotencyKey: undefined });
const tensor = (name: string): StoredTensor => ({ name, datatype: 'UINT8', shape: [1], bytes: 1, key: `k/${name}` });

function setup(rows: Record<string, Partial<JobRecord>>) {
  const calls: string[] = [];
  let next = 0;
  const ids = Object.keys(rows);
  const deps = {
    jobs: {
      submitJob: vi.fn(async (input: SubmitJobInput) => {
        calls.push(`submit ${input.model}`);
        const id = ids[next++]!;
        return { id, status: 'queued' as const, links: { self: `/v1/jobs/${id}`, cancel: `/v1/jobs/${id}/cancel` } };
      }),
    },
    waiter: {
      prepare: vi.fn(async (ref: string) => void calls.push(`prepare ${ref}`)),
      waitForJob: vi.fn(async (id: string) => ({ id, status: 'succeeded', outputs: null, ...rows[id] }) as JobRecord),
    },
    tensors: { readTensor: vi.fn(async (t: StoredTensor) => new Uint8Array([t.name.length])) },
    waitMaxS: 30,
    onJobSubmitted: vi.fn(),
  };
  return { runner: createSubmitAndWait(deps), deps, calls };
}

describe('submit and wait', () => {
  it('prepares each model once before submitting, waits for every job with the owner filter, and counts each submission', async () => {
    const { runner, deps, calls } = setup({ a: {}, b: {} });
    const waited = await runner.submitAndWait([request('m:2'), request('m:2')], 5);
    expect(calls).toEqual(['prepare m:2', 'submit m:2', 'submit m:2']);
    expect(deps.waiter.waitForJob.mock.calls).toEqual([
      ['a', 'k1', 5_000],
      ['b', 'k1', 5_000],
    ]);
    expect(deps.onJobSubmitted.mock.calls).toEqual([
      ['m', 'high'],
      ['m', 'high'],
    ]);
    expect(waited.map((w) => [w.accepted.id, w.ended])).toEqual([
      ['a', true],
      ['b', true],
    ]);
  });

  it('submits nothing when no worker serves the model', async () => {
    const { runner, deps } = setup({ a: {} });
    deps.waiter.prepare.mockRejectedValueOnce(new AppError('MODEL_UNAVAILABLE', 'none'));
    await expect(runner.submitAndWait([request('m')], 5)).rejects.toThrow('none');
    expect(deps.jobs.submitJob).not.toHaveBeenCalled();
  });

  it('reads outputs only when asked, only those named, and none of a job that did not succeed', async () => {
    const { runner, deps } = setup({ a: { outputs: [tensor('x'), tensor('yy')] }, b: { status: 'failed', outputs: [tensor('x')] } });
    const [ok, failed] = await runner.submitAndWait([request('m'), request('m')], 5);
    expect(deps.tensors.readTensor).not.toHaveBeenCalled();
    expect(await ok!.readOutputs(new Set(['yy']))).toEqual([{ name: 'yy', datatype: 'UINT8', shape: [1], data: new Uint8Array([2]) }]);
    expect(deps.tensors.readTensor).toHaveBeenCalledTimes(1);
    expect(await failed!.readOutputs()).toEqual([]);
  });

  it('bounds the wait by WAIT_MAX_S', () => {
    const { runner } = setup({});
    expect([runner.waitSeconds(), runner.waitSeconds(5), runner.waitSeconds(500)]).toEqual([30, 5, 30]);
  });

  it('answers 504 naming an unfinished job before any failure, then the failure', async () => {
    const { runner } = setup({ a: { status: 'failed', errorCode: 'INPUT_DATA_INVALID', errorMessage: 'bad' }, b: { status: 'queued' } });
    const waited = await runner.submitAndWait([request('m'), request('m')], 5);
    const timeout = (() => {
      try {
        requireSucceeded(waited, 5);
      } catch (err) {
        return err as AppError;
      }
    })();
    expect(timeout?.code).toBe('INFERENCE_TIMEOUT');
    expect(timeout?.message).toBe('job b (of 2) is still queued after 5 s; poll /v1/jobs/b for its result');
    expect(() => requireSucceeded(waited.slice(0, 1), 5)).toThrow(expect.objectContaining({ code: 'INPUT_DATA_INVALID' }));
  });
});
