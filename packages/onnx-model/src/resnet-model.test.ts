// ResNet-50 must be the architecture it claims (counted node by node and weight
// by weight) and must run: one 224x224 image to 1000 finite logits that depend
// on the image. The full model builds in ~1 s and loads in ~2 s.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import onnxProto from 'onnx-proto';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readOnnxSignature } from './read-signature.ts';
import { buildResnet50Model } from './resnet-model.ts';
import { createSeededRandom } from './seeded-random.ts';
import { writeOnDemandModel } from './write-demo-models.ts';

/** torchvision's resnet50 has 25,557,032 parameters; folding drops each batch norm's scale and shift (26,560 channels) for one bias. */
const FOLDED_PARAMETERS = 25_557_032 - 26_560;
const IMAGE_VALUES = 3 * 224 * 224;

const images = (count: number, seed: number): Float32Array => {
  const random = createSeededRandom(seed);
  return Float32Array.from({ length: count * IMAGE_VALUES }, () => random() * 2 - 1);
};

describe('ResNet-50 demo model', () => {
  let bytes: Uint8Array;
  beforeAll(() => {
    bytes = buildResnet50Model();
  });

  it('has the ResNet-50 graph: 53 convs, 16 residual adds, ~25.5 M weights, a dynamic batch of 224x224 images', () => {
    const { graph } = onnxProto.onnx.ModelProto.decode(bytes);
    const ops: Record<string, number> = {};
    for (const node of graph!.node!) ops[node.opType!] = (ops[node.opType!] ?? 0) + 1;
    // Convs: the stem, three per bottleneck (16 blocks), a projection opening each of the 4 stages. Relus: the stem, three per block.
    expect(ops).toEqual({ Conv: 53, Relu: 49, Add: 16, MaxPool: 1, GlobalAveragePool: 1, Flatten: 1, Gemm: 1 });
    const parameters = graph!.initializer!.reduce((n, t) => n + t.dims!.reduce((a, d) => a * Number(d), 1), 0);
    expect(parameters).toBe(FOLDED_PARAMETERS);
    expect(bytes.byteLength).toBeGreaterThan(FOLDED_PARAMETERS * 4);
    expect(readOnnxSignature(bytes)).toEqual({
      inputs: [{ name: 'image', datatype: 'FP32', shape: [-1, 3, 224, 224] }],
      outputs: [{ name: 'logits', datatype: 'FP32', shape: [-1, 1000] }],
      batchable: true,
    });
  });

  it('runs in onnxruntime: finite logits that differ by class and by image, each row as if it ran alone', async () => {
    const session = await ort.InferenceSession.create(bytes, { intraOpNumThreads: 1 });
    try {
      const pair = images(2, 7);
      const { logits } = await session.run({ image: new ort.Tensor('float32', pair, [2, 3, 224, 224]) });
      expect(logits!.dims).toEqual([2, 1000]);
      const data = logits!.data as Float32Array;
      expect(data.every(Number.isFinite)).toBe(true);
      const [first, second] = [data.subarray(0, 1000), data.subarray(1000)];
      expect(new Set(first).size).toBeGreaterThan(900);
      expect(first.some((v, i) => Math.abs(v - second[i]!) > 1e-4)).toBe(true);
      const { logits: alone } = await session.run({ image: new ort.Tensor('float32', pair.slice(IMAGE_VALUES), [1, 3, 224, 224]) });
      const maxDiff = (alone!.data as Float32Array).reduce((max, v, i) => Math.max(max, Math.abs(v - second[i]!)), 0);
      expect(maxDiff).toBeLessThanOrEqual(1e-4);
    } finally {
      await session.release();
    }
  });

  it('is written on demand by name, byte-identical to every other build (so an unchanged file is left alone)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'inferq-resnet-'));
    try {
      const model = await writeOnDemandModel(dir, 'resnet50');
      expect(model).toEqual({ name: 'resnet50', path: join(dir, 'resnet50.onnx'), maxBatchSize: 16, maxBatchDelayMs: 10 });
      expect((await readFile(model.path)).equals(bytes)).toBe(true);
      await expect(writeOnDemandModel(dir, 'vgg16')).rejects.toThrow('no on-demand demo model vgg16');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
