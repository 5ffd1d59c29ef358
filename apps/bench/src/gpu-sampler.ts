import { spawn } from 'node:child_process';

export interface GpuUtilisation {
  /** nvidia-smi's utilization.gpu: the share of time a kernel ran, sampled every `intervalMs`. */
  meanPercent: number;
  maxPercent: number;
  memoryMaxMiB: number;
  samples: number;
}

/**
 * Samples the device's GPU with `nvidia-smi -lms` until stopped. Null for the
 * CPU, where nvidia-smi is missing, or when it gave no reading.
 */
export function sampleGpu(device: string, intervalMs = 250): { stop(): Promise<GpuUtilisation | null> } {
  const index = /^(?:cuda|webgpu):(\d+)$/.exec(device)?.[1];
  if (index === undefined) return { stop: async () => null };
  const util: number[] = [];
  const memory: number[] = [];
  const child = spawn('nvidia-smi', ['--query-gpu=utilization.gpu,memory.used', '--format=csv,noheader,nounits', `--id=${index}`, `-lms`, String(intervalMs)], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const exited = new Promise<void>((resolve) => {
    child.once('error', () => resolve());
    child.once('close', () => resolve());
  });
  let partial = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      const [u, m] = line.split(',').map((s) => Number(s.trim()));
      if (!Number.isFinite(u) || !Number.isFinite(m)) continue;
      util.push(u!);
      memory.push(m!);
    }
  });
  return {
    async stop() {
      child.kill();
      await exited;
      if (util.length === 0) return null;
      return {
        meanPercent: Math.round(util.reduce((a, b) => a + b, 0) / util.length),
        maxPercent: Math.max(...util),
        memoryMaxMiB: Math.max(...memory),
        samples: util.length,
      };
    },
  };
}
