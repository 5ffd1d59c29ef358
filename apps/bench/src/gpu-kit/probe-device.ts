// `node --import tsx probe-device.ts <device>`: whether onnxruntime starts the device's own
// provider and runs the demo CNN on it. Prints one JSON line; run in a child process so a
// provider that crashes while loading takes only the probe down.
import { providerCandidates } from '@inferq/inference';
import { buildCnnModel } from '@inferq/onnx-model';
import { InferenceSession, Tensor } from 'onnxruntime-node';

export interface ProbeResult {
  device: string;
  ok: boolean;
  /** Milliseconds per batch of 32 images, after warm-up. */
  msPerBatch?: number;
  error?: string;
}

const device = process.argv[2] ?? 'cpu';
const result: ProbeResult = { device, ok: false };
try {
  const session = await InferenceSession.create(buildCnnModel(), {
    executionProviders: providerCandidates(device).slice(0, 1) as InferenceSession.ExecutionProviderConfig[],
  });
  const feeds = { image: new Tensor('float32', new Float32Array(32 * 3 * 32 * 32).fill(0.5), [32, 3, 32, 32]) };
  for (let i = 0; i < 3; i++) await session.run(feeds);
  const started = performance.now();
  for (let i = 0; i < 20; i++) await session.run(feeds);
  Object.assign(result, { ok: true, msPerBatch: Number(((performance.now() - started) / 20).toFixed(3)) });
  await session.release();
} catch (err) {
  result.error = (err as Error).message.split('\n').slice(0, 3).join(' ');
}
console.log(JSON.stringify(result));
