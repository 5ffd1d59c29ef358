import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { WorkerStatus } from '@inferq/contracts';

const run = promisify(execFile);

export type GpuStatus = NonNullable<WorkerStatus['gpu']>;

/**
 * Reads utilisation and memory of the worker's GPU with nvidia-smi. CPU
 * workers, and machines without nvidia-smi, report null; after one failure
 * the probe stops trying so a missing tool costs nothing per heartbeat.
 */
export function createGpuProbe(device: string): () => Promise<GpuStatus | null> {
  const index = /^(?:cuda|webgpu):(\d+)$/.exec(device)?.[1];
  let available = index !== undefined;
  return async () => {
    if (!available) return null;
    try {
      const { stdout } = await run(
        'nvidia-smi',
        ['--query-gpu=name,utilization.gpu,memory.used,memory.total', '--format=csv,noheader,nounits', `--id=${index}`],
        { timeout: 2_000 },
      );
      return parseNvidiaSmi(stdout);
    } catch {
      available = false;
      return null;
    }
  };
}

/** One CSV line: `NVIDIA H100 80GB HBM3, 37, 1234, 81559`. */
export function parseNvidiaSmi(stdout: string): GpuStatus | null {
  const parts =
    stdout
      .trim()
      .split('\n')[0]
      ?.split(',')
      .map((s) => s.trim()) ?? [];
  const [name, util, used, total] = parts;
  const numbers = [util, used, total].map(Number);
  if (!name || numbers.some((n) => !Number.isFinite(n))) return null;
  return { name, utilizationPercent: numbers[0]!, memoryUsedMiB: numbers[1]!, memoryTotalMiB: numbers[2]! };
}
