// Whatever bytes arrive, the reader answers with a signature or OnnxModelError,
// quickly: an upload must never crash the API or turn into a 500.
import { describe, expect, it } from 'vitest';
import { buildMlpModel } from './demo-models.ts';
import { OnnxModelError } from './onnx-model-error.ts';
import { readOnnxSignature } from './read-signature.ts';
import { createSeededRandom } from './seeded-random.ts';
import { buildTransformerModel } from './transformer-model.ts';

/** The reader's outcome: 'error' for OnnxModelError, the signature otherwise; any other throw fails the test. */
function readOutcome(bytes: Uint8Array): ReturnType<typeof readOnnxSignature> | 'error' {
  try {
    return readOnnxSignature(bytes);
  } catch (err) {
    if (err instanceof OnnxModelError) return 'error';
    throw new Error(`readOnnxSignature threw ${String(err)} for ${bytes.byteLength} bytes`, { cause: err });
  }
}

const varint = (value: number): number[] => {
  const out: number[] = [];
  let v = value;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  return [...out, v];
};
const tag = (field: number, wireType: number) => varint(field * 8 + wireType);
const lengthDelimited = (field: number, body: number[]) => [...tag(field, 2), ...varint(body.length), ...body];
const irAndOpset = [...tag(1, 0), 8, ...lengthDelimited(8, [...tag(2, 0), 17])];
const floatOutput = lengthDelimited(12, [
  ...lengthDelimited(1, [0x79]),
  ...lengthDelimited(2, lengthDelimited(1, [...tag(1, 0), 1, ...lengthDelimited(2, [])])),
]);

/** Graph input "x" typed as a sequence of sequences `depth` deep (built inside out, linear time). */
function nestedSequenceInput(depth: number): number[] {
  const innermost = lengthDelimited(1, [...tag(1, 0), 1]);
  const prefixes: number[][] = [];
  let length = innermost.length;
  for (let i = 0; i < depth; i += 1) {
    const elemType = [...tag(1, 2), ...varint(length)];
    const sequenceType = [...tag(4, 2), ...varint(length + elemType.length)];
    prefixes.push([...sequenceType, ...elemType]);
    length += elemType.length + sequenceType.length;
  }
  const type = [...prefixes.reverse().flat(), ...innermost];
  return lengthDelimited(11, [...lengthDelimited(1, [0x78]), ...lengthDelimited(2, type)]);
}

describe('readOnnxSignature on garbage', () => {
  it('rejects an empty buffer and non-bytes', () => {
    expect(readOutcome(new Uint8Array(0))).toBe('error');
    for (const notBytes of [undefined, null, 'model', new ArrayBuffer(8), [8, 1]]) {
      expect(readOutcome(notBytes as unknown as Uint8Array)).toBe('error');
    }
  });

  it('rejects random bytes of many lengths', () => {
    const started = performance.now();
    for (let seed = 1; seed <= 500; seed += 1) {
      const random = createSeededRandom(seed);
      const bytes = Uint8Array.from({ length: Math.floor(random() * 4096) + 1 }, () => Math.floor(random() * 256));
      expect(readOutcome(bytes)).toBe('error');
    }
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('gives the full signature or an error for a model cut short anywhere', () => {
    for (const model of [buildMlpModel(), buildTransformerModel()]) {
      const expected = readOnnxSignature(model);
      const random = createSeededRandom(model.byteLength);
      const edges = Array.from({ length: 2048 }, (_, i) => [i, model.byteLength - 1 - i]).flat();
      const offsets = [...edges, ...Array.from({ length: 500 }, () => Math.floor(random() * model.byteLength))];
      for (const offset of offsets) {
        const outcome = readOutcome(model.subarray(0, offset));
        if (outcome !== 'error') expect(outcome).toEqual(expected);
      }
    }
  });

  it('gives a signature or an error for a model with flipped bytes', () => {
    // Inputs, outputs and opset_import sit at the end, nodes at the start: mutate there.
    const model = buildTransformerModel();
    const random = createSeededRandom(7);
    for (let i = 0; i < 3000; i += 1) {
      const mutated = model.slice();
      const nearEnd = random() < 0.7;
      const offset = nearEnd ? model.byteLength - 1 - Math.floor(random() * 400) : Math.floor(random() * 400);
      mutated[offset] = Math.floor(random() * 256);
      readOutcome(mutated);
    }
  });

  it('rejects lengths declared far beyond the buffer, at every level', () => {
    const huge = 2 ** 31;
    const cases = [
      [...tag(7, 2), ...varint(huge), 1, 2, 3],
      [...tag(7, 2), ...varint(2 ** 32 - 1), 1, 2, 3],
      [...tag(7, 2), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
      [...irAndOpset, ...tag(7, 2), 8, ...tag(11, 2), ...varint(huge), 0],
      [...irAndOpset, ...lengthDelimited(7, [...tag(5, 2), ...varint(huge)])],
      [...irAndOpset, ...lengthDelimited(7, lengthDelimited(11, [...tag(2, 2), ...varint(huge)]))],
      [...irAndOpset, ...lengthDelimited(7, [...tag(9, 2), ...varint(huge)])],
    ];
    for (const bytes of cases) expect(readOutcome(Uint8Array.from(bytes))).toBe('error');
  });

  it('rejects deep nesting quickly and without a stack overflow', () => {
    const groups = new Uint8Array(1 << 20).fill(tag(1, 3)[0]!);
    let started = performance.now();
    expect(readOutcome(groups)).toBe('error');
    expect(performance.now() - started).toBeLessThan(200);

    const model = Uint8Array.from([...irAndOpset, ...lengthDelimited(7, [...nestedSequenceInput(20_000), ...floatOutput])]);
    started = performance.now();
    expect(() => readOnnxSignature(model)).toThrow(
      expect.objectContaining({ code: 'MODEL_UNSUPPORTED', message: expect.stringContaining('input "x" is a sequence') }),
    );
    expect(performance.now() - started).toBeLessThan(200);
  });

  it('rejects wire types that do not match the ONNX schema', () => {
    const cases = [
      [...tag(7, 0), 5, ...irAndOpset],
      [...irAndOpset, ...lengthDelimited(7, [...tag(11, 0), 1])],
      [...irAndOpset, ...lengthDelimited(7, lengthDelimited(11, [...tag(1, 5), 0, 0, 0, 0]))],
      [...tag(0, 0), 0],
      [...tag(1, 7), 0],
    ];
    for (const bytes of cases) expect(readOutcome(Uint8Array.from(bytes))).toBe('error');
  });
});
