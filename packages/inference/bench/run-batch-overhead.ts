/**
 * What the session thread costs: infer (thread hop, buffer moves, result
 * split) against session.run on the same inputs in this thread.
 * Run: node --import tsx packages/inference/bench/run-batch-overhead.ts
 */
import type { RawTensor } from '@inferq/contracts';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InferenceSession } from 'onnxruntime-node';
import { openModelSession } from '../src/index.ts';
import { toOrtTensor } from '../src/ort-tensors.ts';
import { identityModel, linearModel } from '../src/testing/test-models.ts';

const ITERATIONS = 200;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const tensor = (shape: number[]): RawTensor => ({ name: 'X', datatype: 'FP32', shape, data: new Uint8Array(shape.reduce((a, b) => a * b, 4)).fill(1) });

async function measure(label: string, model: Uint8Array, shape: number[], jobsPerBatch: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'inferq-bench-'));
  const modelPath = join(dir, 'model.onnx');
  await writeFile(modelPath, model);
  const openStarted = performance.now();
  const session = await openModelSession({ modelPath, device: 'cpu' });
  const openMs = performance.now() - openStarted;
  const direct = await InferenceSession.create(modelPath);
  const stacked = toOrtTensor(tensor([shape[0]! * jobsPerBatch, ...shape.slice(1)]));
  const directMs: number[] = [];
  const batchMs: number[] = [];
  const inferMs: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    let t = performance.now();
    await direct.run({ X: stacked });
    directMs.push(performance.now() - t);
    const jobs = Array.from({ length: jobsPerBatch }, () => ({ inputs: [tensor(shape)] }));
    t = performance.now();
    const result = await session.infer(jobs);
    batchMs.push(performance.now() - t);
    inferMs.push(result.inferMs);
  }
  const mb = (stacked.data as Float32Array).byteLength / 2 ** 20;
  console.log(
    `${label} (${jobsPerBatch} jobs, ${mb.toFixed(2)} MiB in): direct run ${median(directMs).toFixed(3)} ms, ` +
      `infer ${median(batchMs).toFixed(3)} ms (inferMs ${median(inferMs).toFixed(3)}), overhead ` +
      `${(median(batchMs) - median(directMs)).toFixed(3)} ms; open ${openMs.toFixed(0)} ms`,
  );
  await session.close();
  await direct.release();
  await rm(dir, { recursive: true, force: true });
}

await measure('linear [1,4]', linearModel(), [1, 4], 1);
await measure('linear [1,4]', linearModel(), [1, 4], 32);
await measure('identity [64,1024]', identityModel('FP32', ['N', 1024]), [64, 1024], 1);
await measure('identity [64,1024]', identityModel('FP32', ['N', 1024]), [64, 1024], 16);
await measure('identity [4096,1024]', identityModel('FP32', ['N', 1024]), [4096, 1024], 1);
await measure('identity [1024,1024]', identityModel('FP32', ['N', 1024]), [1024, 1024], 4);
