import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InferenceSession } from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { recordNodePlacement, summarisePlacement, zeroFeeds } from './node-placement.ts';
import { gatherModel, linearModel } from './testing/test-models.ts';

const kernel = (node: string, provider: string, op: string) => ({ cat: 'Node', name: `${node}_kernel_time`, args: { provider, op_name: op } });

describe('summarisePlacement', () => {
  it('counts each node once by provider and names the op types left on the CPU', () => {
    const events = [
      { cat: 'Session', name: 'session_initialization', args: {} },
      kernel('conv1', 'CUDAExecutionProvider', 'Conv'),
      { cat: 'Node', name: 'conv1_fence_before', args: { provider: 'CUDAExecutionProvider', op_name: 'Conv' } },
      kernel('conv2', 'CUDAExecutionProvider', 'Conv'),
      kernel('shape', 'CPUExecutionProvider', 'Shape'),
      kernel('gather', 'CPUExecutionProvider', 'Gather'),
      kernel('shape2', 'CPUExecutionProvider', 'Shape'),
      kernel('conv1', 'CUDAExecutionProvider', 'Conv'),
    ];
    expect(summarisePlacement(events)).toEqual({
      line: 'CPUExecutionProvider 3 (Gather, Shape), CUDAExecutionProvider 2 of 5 nodes',
      nodesByProvider: { CUDAExecutionProvider: 2, CPUExecutionProvider: 3 },
    });
  });

  it('says all nodes for one provider, and unknown for a profile without nodes', () => {
    expect(summarisePlacement([kernel('a', 'CUDAExecutionProvider', 'MatMul'), kernel('b', 'CUDAExecutionProvider', 'Add')]).line).toBe(
      'CUDAExecutionProvider: all 2 nodes',
    );
    expect(summarisePlacement([]).line).toMatch(/^unknown/);
  });
});

describe('zeroFeeds', () => {
  it('fills tensors of the input types with symbolic dims set to 1, and names what it cannot fill', () => {
    const feeds = zeroFeeds([
      { name: 'x', isTensor: true, type: 'float32', shape: ['batch', 3] },
      { name: 'ids', isTensor: true, type: 'int64', shape: [2, -1] },
    ]);
    expect(typeof feeds).toBe('object');
    const { x, ids } = feeds as Record<string, { dims: readonly number[]; data: unknown }>;
    expect(x!.dims).toEqual([1, 3]);
    expect(ids!.dims).toEqual([2, 1]);
    expect(ids!.data).toBeInstanceOf(BigInt64Array);
    expect(zeroFeeds([{ name: 's', isTensor: true, type: 'string', shape: [1] }])).toMatch(/input "s" is string/);
    expect(zeroFeeds([{ name: 'm', isTensor: false }])).toMatch(/not a tensor/);
  });
});

describe('recordNodePlacement', () => {
  it.each([
    ['linear', linearModel],
    ['gather', gatherModel],
  ])('reads where the %s model ran from one profiled run, then stops profiling and removes the profile', async (_name, model) => {
    const dir = await mkdtemp(join(tmpdir(), 'inferq-placement-test-'));
    const session = await InferenceSession.create(model(), { enableProfiling: true, profileFilePrefix: join(dir, 'p') });
    const placement = await recordNodePlacement(session, dir);
    expect(placement.line).toMatch(/^CPUExecutionProvider: all \d+ nodes$/);
    expect(placement.nodesByProvider!.CPUExecutionProvider).toBeGreaterThan(0);
    expect(existsSync(dir)).toBe(false);
    await session.release();
  });
});
