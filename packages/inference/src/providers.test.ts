import { describe, expect, it } from 'vitest';
import { parseDevice, providerCandidates, providerName } from './providers.ts';

describe('parseDevice', () => {
  it('parses cpu, cuda:N and webgpu:N', () => {
    expect(parseDevice('cpu')).toEqual({ kind: 'cpu', index: 0 });
    expect(parseDevice('cuda:0')).toEqual({ kind: 'cuda', index: 0 });
    expect(parseDevice('cuda:7')).toEqual({ kind: 'cuda', index: 7 });
    expect(parseDevice('webgpu:1')).toEqual({ kind: 'webgpu', index: 1 });
  });

  it.each(['', 'gpu', 'cuda', 'cuda:', 'cuda:-1', 'cuda:01', 'cuda:1.5', 'CUDA:0', 'cpu:0', ' cpu', 'webgpu:99999', 'tensorrt:0'])(
    'rejects %j with the accepted forms in the message',
    (device) => {
      expect(() => parseDevice(device)).toThrow(/expected "cpu", "cuda:N" or "webgpu:N"/);
    },
  );
});

describe('providerCandidates', () => {
  it('tries the device provider, then cpu', () => {
    expect(providerCandidates('cuda:0')).toEqual([{ name: 'cuda', deviceId: 0 }, 'cpu']);
    expect(providerCandidates('cuda:3')).toEqual([{ name: 'cuda', deviceId: 3 }, 'cpu']);
    expect(providerCandidates('webgpu:0')).toEqual(['webgpu', 'cpu']);
    expect(providerCandidates('cpu')).toEqual(['cpu']);
  });

  it('follows a configured order, pinning CUDA-family providers to the device index', () => {
    expect(providerCandidates('cuda:1', ['tensorrt', 'cuda', 'webgpu', 'cpu'])).toEqual([
      { name: 'tensorrt', deviceId: 1 },
      { name: 'cuda', deviceId: 1 },
      'webgpu',
      'cpu',
    ]);
    expect(providerCandidates('webgpu:0', ['webgpu'])).toEqual(['webgpu']);
    expect(providerCandidates('cuda:0', ['CUDA', 'cuda', 'cpu'])).toEqual([{ name: 'cuda', deviceId: 0 }, 'cpu']);
    expect(providerCandidates('cuda:0', [])).toEqual([{ name: 'cuda', deviceId: 0 }, 'cpu']);
  });

  it('never tries a GPU provider on a cpu device', () => {
    expect(providerCandidates('cpu', ['cuda', 'webgpu', 'cpu'])).toEqual(['cpu']);
    expect(() => providerCandidates('cpu', ['cuda'])).toThrow(/no execution provider in \[cuda\] can run on device cpu/);
  });

  it('rejects unknown providers and invalid devices', () => {
    expect(() => providerCandidates('cuda:0', ['rocm'])).toThrow(/unknown execution provider "rocm"/);
    expect(() => providerCandidates('gpu0')).toThrow(/invalid device/);
  });

  it('names candidates for logs', () => {
    expect(providerCandidates('cuda:2').map(providerName)).toEqual(['cuda', 'cpu']);
  });
});
