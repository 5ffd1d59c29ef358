import { describe, expect, it } from 'vitest';
import { createGpuProbe, parseNvidiaSmi } from './gpu-probe.ts';

describe('GPU probe', () => {
  it("parses nvidia-smi's CSV line", () => {
    expect(parseNvidiaSmi('NVIDIA H100 80GB HBM3, 37, 1234, 81559\n')).toEqual({
      name: 'NVIDIA H100 80GB HBM3',
      utilizationPercent: 37,
      memoryUsedMiB: 1234,
      memoryTotalMiB: 81559,
    });
    expect(parseNvidiaSmi('')).toBeNull();
    expect(parseNvidiaSmi('NVIDIA X, [N/A], 1, 2')).toBeNull();
  });

  it('reports null for CPU workers without running anything', async () => {
    expect(await createGpuProbe('cpu')()).toBeNull();
  });
});
