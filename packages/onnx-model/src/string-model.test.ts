// The string demo model must run in onnxruntime with string tensors in and
// out, read as BYTES, and map each row alone so jobs batch along dim 0.
import * as ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { readOnnxSignature } from './read-signature.ts';
import { buildLabelsModel, LABELS_UNKNOWN } from './string-model.ts';

const WORDS = ['cat', 'héllo', 'pine', '', 'dog', '日本 🌲', 'fern', 'CAT'];

describe('labels model (strings in and out)', () => {
  it('has a BYTES signature that batches along dim 0', () => {
    expect(readOnnxSignature(buildLabelsModel())).toEqual({
      inputs: [{ name: 'words', datatype: 'BYTES', shape: [-1, -1] }],
      outputs: [
        { name: 'echo', datatype: 'BYTES', shape: [-1, -1] },
        { name: 'ids', datatype: 'INT64', shape: [-1, -1] },
        { name: 'classes', datatype: 'BYTES', shape: [-1, -1] },
      ],
      batchable: true,
    });
  });

  it('echoes any text, looks words up, and gives each row the answer it gets alone', async () => {
    const session = await ort.InferenceSession.create(buildLabelsModel());
    try {
      const run = async (words: string[], rows: number) => session.run({ words: new ort.Tensor('string', words, [rows, words.length / rows]) });
      const batched = await run(WORDS, 4);
      expect(batched.echo!.data).toEqual(WORDS);
      expect(Array.from(batched.ids!.data as BigInt64Array)).toEqual([0n, -1n, 5n, -1n, 1n, -1n, 7n, -1n]);
      expect(batched.classes!.data).toEqual(['animal', LABELS_UNKNOWN, 'plant', LABELS_UNKNOWN, 'animal', LABELS_UNKNOWN, 'plant', LABELS_UNKNOWN]);
      for (let row = 0; row < 4; row += 1) {
        const alone = await run(WORDS.slice(row * 2, row * 2 + 2), 1);
        expect(alone.classes!.data).toEqual((batched.classes!.data as string[]).slice(row * 2, row * 2 + 2));
      }
    } finally {
      await session.release();
    }
  });
});
