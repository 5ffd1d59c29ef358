// The demo models must really run in onnxruntime, and each row of a batch must
// come out as if it ran alone: the batcher stacks unrelated jobs along dim 0.
import { readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, describe, expect, it } from 'vitest';
import { buildCnnModel, buildMlpModel } from './demo-models.ts';
import { buildLabelsModel } from './string-model.ts';
import { createSeededRandom } from './seeded-random.ts';
import { buildTransformerModel } from './transformer-model.ts';
import { resolveOcrDetectionModelPath, writeDemoModels } from './write-demo-models.ts';

type Feeds = Record<string, ort.Tensor>;

interface ModelCase {
  name: string;
  bytes: () => Uint8Array;
  /** Inputs for `batch` rows; row i must not depend on the batch size. */
  makeFeeds: (batch: number, seed: number) => Feeds;
  outputShapes: (batch: number) => Record<string, number[]>;
}

const randomFloats = (count: number, seed: number): Float32Array => {
  const random = createSeededRandom(seed);
  return Float32Array.from({ length: count }, () => random() * 2 - 1);
};

const SEQ_LEN = 12;
const CASES: ModelCase[] = [
  {
    name: 'mlp',
    bytes: buildMlpModel,
    makeFeeds: (batch, seed) => ({ features: new ort.Tensor('float32', randomFloats(batch * 64, seed), [batch, 64]) }),
    outputShapes: (batch) => ({ logits: [batch, 16] }),
  },
  {
    name: 'cnn',
    bytes: buildCnnModel,
    makeFeeds: (batch, seed) => ({ image: new ort.Tensor('float32', randomFloats(batch * 3 * 32 * 32, seed), [batch, 3, 32, 32]) }),
    outputShapes: (batch) => ({ logits: [batch, 10] }),
  },
  {
    name: 'transformer',
    bytes: buildTransformerModel,
    makeFeeds: (batch, seed) => {
      const random = createSeededRandom(seed);
      const ids = BigInt64Array.from({ length: batch * SEQ_LEN }, () => BigInt(Math.floor(random() * 1000)));
      // Each row keeps a random-length prefix; the last row of 4 is fully masked, which must stay finite.
      const mask = BigInt64Array.from({ length: batch * SEQ_LEN }, (_, i) => {
        const row = Math.floor(i / SEQ_LEN);
        const kept = row === 3 ? 0 : SEQ_LEN - ((row * 5 + seed) % SEQ_LEN);
        return BigInt(i % SEQ_LEN < kept ? 1 : 0);
      });
      return { input_ids: new ort.Tensor('int64', ids, [batch, SEQ_LEN]), attention_mask: new ort.Tensor('int64', mask, [batch, SEQ_LEN]) };
    },
    outputShapes: (batch) => ({ last_hidden_state: [batch, SEQ_LEN, 64], pooled: [batch, 64] }),
  },
  {
    name: 'ocr-det',
    bytes: () => readFileSync(resolveOcrDetectionModelPath()),
    makeFeeds: (batch, seed) => ({ x: new ort.Tensor('float32', randomFloats(batch * 3 * 64 * 96, seed), [batch, 3, 64, 96]) }),
    outputShapes: (batch) => ({ 'sigmoid_0.tmp_0': [batch, 1, 64, 96] }),
  },
];

/** Row `row` of a batch-`batch` feed, as a batch of one. */
function sliceFeeds(feeds: Feeds, row: number): Feeds {
  return Object.fromEntries(
    Object.entries(feeds).map(([name, t]) => {
      const rowSize = t.size / t.dims[0]!;
      const data = (t.data as Float32Array | BigInt64Array).slice(row * rowSize, (row + 1) * rowSize);
      return [name, new ort.Tensor(t.type as 'float32', data as Float32Array, [1, ...t.dims.slice(1)])];
    }),
  );
}

describe.each(CASES)('demo model $name in onnxruntime', ({ bytes, makeFeeds, outputShapes }) => {
  it('runs batch 1 and batch 4 with finite outputs of the declared shapes, each row independent of the others', async () => {
    const session = await ort.InferenceSession.create(bytes(), { graphOptimizationLevel: 'all' });
    try {
      const single = await session.run(makeFeeds(1, 11));
      for (const [name, shape] of Object.entries(outputShapes(1))) expect(single[name]!.dims).toEqual(shape);

      const feeds = makeFeeds(4, 3);
      const batched = await session.run(feeds);
      for (const [name, shape] of Object.entries(outputShapes(4))) {
        const out = batched[name]!;
        expect(out.dims).toEqual(shape);
        expect((out.data as Float32Array).every(Number.isFinite)).toBe(true);
        expect(new Set(out.data as Float32Array).size).toBeGreaterThan(1);
      }
      for (let row = 0; row < 4; row += 1) {
        const alone = await session.run(sliceFeeds(feeds, row));
        for (const name of Object.keys(outputShapes(1))) {
          const rowSize = alone[name]!.size;
          const fromBatch = (batched[name]!.data as Float32Array).subarray(row * rowSize, (row + 1) * rowSize);
          const maxDiff = (alone[name]!.data as Float32Array).reduce((max, v, i) => Math.max(max, Math.abs(v - fromBatch[i]!)), 0);
          expect(maxDiff, `${name} row ${row}`).toBeLessThanOrEqual(1e-5);
        }
      }
    } finally {
      await session.release();
    }
  });
});

describe('demo model files', () => {
  const dirs: string[] = [];
  afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

  it('builds byte-identical models every time', () => {
    for (const build of [buildMlpModel, buildCnnModel, buildTransformerModel, buildLabelsModel]) expect(Buffer.from(build()).equals(build())).toBe(true);
  });

  it('writes the generated models once, leaves identical files alone, and lists ocr-det by its npm path', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'inferq-models-'));
    dirs.push(dir);
    const first = await writeDemoModels(dir);
    expect(first).toEqual([
      { name: 'mlp', path: join(dir, 'mlp.onnx'), maxBatchSize: 64, maxBatchDelayMs: 2 },
      { name: 'cnn', path: join(dir, 'cnn.onnx'), maxBatchSize: 32, maxBatchDelayMs: 5 },
      {
        name: 'transformer',
        path: join(dir, 'transformer.onnx'),
        maxBatchSize: 32,
        maxBatchDelayMs: 5,
        tokenizerPath: join(dir, 'transformer.tokenizer.json'),
      },
      { name: 'labels', path: join(dir, 'labels.onnx'), maxBatchSize: 32, maxBatchDelayMs: 5 },
      { name: 'ocr-det', path: resolveOcrDetectionModelPath(), maxBatchSize: 4, maxBatchDelayMs: 10 },
    ]);
    const mtimes = first.map((m) => statSync(m.path).mtimeMs);
    expect(readFileSync(first[0]!.path).equals(buildMlpModel())).toBe(true);
    const second = await writeDemoModels(dir);
    expect(second).toEqual(first);
    expect(second.map((m) => statSync(m.path).mtimeMs)).toEqual(mtimes);
  });
});
