import type { ProviderCandidate } from '@inferq/inference';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { meterTiers, type TierCosts } from '../costs/tier-costs.ts';

export interface RawOnnxOptions {
  modelPath: string;
  input: string;
  /** Full input shape, batch dimension first. */
  shape: number[];
  intraOpNumThreads: number;
  /** onnxruntime's `executionProviders`, e.g. `[{ name: 'cuda', deviceId: 0 }]`. @default the CPU */
  executionProviders?: ProviderCandidate[];
  durationMs: number;
}

/**
 * The model alone: one session in this process running the same batch back to
 * back, with nothing of inferq around it. Returns items (batch rows) per second.
 */
export const measureRawOnnx = async (o: RawOnnxOptions): Promise<number> => (await runRawOnnx(o)).itemsPerS;

/** measureRawOnnx, with what an item cost: this process's CPU, counted as the worker tier. */
export async function runRawOnnx(o: RawOnnxOptions): Promise<{ itemsPerS: number; costs: TierCosts }> {
  const session = await InferenceSession.create(o.modelPath, {
    intraOpNumThreads: o.intraOpNumThreads,
    executionProviders: (o.executionProviders ?? ['cpu']) as InferenceSession.ExecutionProviderConfig[],
  });
  try {
    const values = new Float32Array(o.shape.reduce((a, b) => a * b, 1)).map((_, i) => Math.sin(i));
    const feeds = { [o.input]: new Tensor('float32', values, o.shape) };
    for (let i = 0; i < 5; i++) await session.run(feeds);
    let runs = 0;
    const meter = await meterTiers({ self: 'worker', sessionCores: o.intraOpNumThreads });
    const started = performance.now();
    while (performance.now() - started < o.durationMs) {
      await session.run(feeds);
      runs++;
    }
    const itemsPerS = (runs * o.shape[0]!) / ((performance.now() - started) / 1000);
    return { itemsPerS, costs: await meter.stop(runs * o.shape[0]!) };
  } finally {
    await session.release();
  }
}
