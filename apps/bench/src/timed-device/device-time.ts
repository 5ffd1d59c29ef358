import { loadBenchEnv } from '../bench-env.ts';

/**
 * The timed device: a stand-in for a GPU session whose batch takes a set
 * wall time and almost no CPU, so a run measures whether the pipeline keeps
 * a fast device fed, apart from inference itself. Bench-only: the worker's
 * configuration cannot select it; the bench starts its own worker entry
 * (timed-worker.ts) to use it.
 *
 * A batch of up to `batchItems` items takes `batchMs`, a larger one
 * proportionally longer: a GPU's time for a small batch is about its time
 * for a full one, so a pipeline that sends small batches wastes the device,
 * as it would a real one.
 */
export interface DeviceTime {
  batchMs: number;
  batchItems: number;
}

/** The entry the bench starts a timed-device worker from, relative to the repository root. */
export const TIMED_WORKER_ENTRY = 'apps/bench/src/timed-device/timed-worker.ts';

/** The H200's measured CNN batch (docs/benchmarks/gpu-h200-webgpu/run-2): 1.22 ms for 32 items. */
export const H200_CNN_BATCH: DeviceTime = { batchMs: 1.22, batchItems: 32 };

/** BENCH_DEVICE_BATCH_MS and BENCH_DEVICE_BATCH_ITEMS, else the H200's CNN batch. */
export function deviceTimeFromEnv(): DeviceTime {
  const env = loadBenchEnv();
  const batchMs = Number(env.BENCH_DEVICE_BATCH_MS ?? H200_CNN_BATCH.batchMs);
  const batchItems = Number(env.BENCH_DEVICE_BATCH_ITEMS ?? H200_CNN_BATCH.batchItems);
  if (!(batchMs > 0 && batchMs <= 10_000)) throw new Error(`BENCH_DEVICE_BATCH_MS must be a time in ms (0-10000], not "${env.BENCH_DEVICE_BATCH_MS}"`);
  if (!Number.isInteger(batchItems) || batchItems < 1)
    throw new Error(`BENCH_DEVICE_BATCH_ITEMS must be a positive integer, not "${env.BENCH_DEVICE_BATCH_ITEMS}"`);
  return { batchMs, batchItems };
}

/** Wall time of a batch of `items` on the device. */
export const batchTimeMs = (d: DeviceTime, items: number): number => d.batchMs * Math.max(1, items / d.batchItems);

/** Items a second the device runs when it is never idle, in full batches. */
export const deviceCapacityItemsPerS = (d: DeviceTime): number => (d.batchItems / d.batchMs) * 1000;

/** The settings a worker started by the bench passes on to its timed device. */
export const deviceTimeEnv = (d: DeviceTime): Record<string, string> => ({
  BENCH_DEVICE_BATCH_MS: String(d.batchMs),
  BENCH_DEVICE_BATCH_ITEMS: String(d.batchItems),
});
