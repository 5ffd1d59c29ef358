// `node --import tsx probe-device.ts <device> [same-release|any]`: whether onnxruntime starts the device's own
// provider and runs the demo CNN on it, opened the way the worker opens a model (the provider's release pairing
// checked, one placement run that says where the nodes ran). Prints one JSON line; run in a child process so a
// provider that crashes while loading takes only the probe down.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { providerCandidates, type ProviderPairingPolicy } from '@inferq/inference';
import { createSessionWithFallback } from '@inferq/inference/session-thread-server';
import { buildCnnModel } from '@inferq/onnx-model';
import { Tensor } from 'onnxruntime-node';

export interface ProbeResult {
  device: string;
  ok: boolean;
  /** Milliseconds per batch of 32 images, after warm-up. */
  msPerBatch?: number;
  /** The provider library's release against the core's (CUDA), and where the CNN's nodes ran. */
  providerPairing?: string;
  placement?: string;
  error?: string;
}

const device = process.argv[2] ?? 'cpu';
const pairing = (process.argv[3] ?? 'same-release') as ProviderPairingPolicy;
const result: ProbeResult = { device, ok: false };
const dir = await mkdtemp(join(tmpdir(), 'inferq-probe-'));
try {
  const modelPath = join(dir, 'cnn.onnx');
  await writeFile(modelPath, buildCnnModel());
  const created = await createSessionWithFallback({ modelPath, candidates: providerCandidates(device).slice(0, 1), providerPairing: pairing });
  Object.assign(result, { providerPairing: created.providerPairing, placement: created.placement });
  const { session } = created;
  const feeds = { image: new Tensor('float32', new Float32Array(32 * 3 * 32 * 32).fill(0.5), [32, 3, 32, 32]) };
  for (let i = 0; i < 3; i++) await session.run(feeds);
  const started = performance.now();
  for (let i = 0; i < 20; i++) await session.run(feeds);
  Object.assign(result, { ok: true, msPerBatch: Number(((performance.now() - started) / 20).toFixed(3)) });
  await session.release();
} catch (err) {
  result.error = (err as Error).message.split('\n').slice(0, 3).join(' ');
} finally {
  await rm(dir, { recursive: true, force: true });
}
console.log(JSON.stringify(result));
