// POST /v1/jobs bodies for a model with an input of every datatype: each
// element fits its datatype (boundaries included), or exactly one does not
// (past the range, ±Infinity, a fraction in an integer tensor, a BOOL that is
// not true/false/0/1), which must be refused with 400 INPUT_DATA_INVALID.
import fc from 'fast-check';
import type { DataType } from '@inferq/contracts';
import { createGraphBuilder, ElemType } from '@inferq/onnx-model';
import { RawJson, toJsonText } from './hostile-values.ts';

export const TYPED_MODEL = 'all-types';

const ELEM_TYPES: Record<DataType, ElemType> = {
  BOOL: ElemType.BOOL,
  UINT8: ElemType.UINT8,
  UINT16: ElemType.UINT16,
  UINT32: ElemType.UINT32,
  UINT64: ElemType.UINT64,
  INT8: ElemType.INT8,
  INT16: ElemType.INT16,
  INT32: ElemType.INT32,
  INT64: ElemType.INT64,
  FP16: ElemType.FLOAT16,
  FP32: ElemType.FLOAT,
  FP64: ElemType.DOUBLE,
  BYTES: ElemType.STRING,
};
/** The model's inputs, in order. */
export const TYPED_DATATYPES = Object.keys(ELEM_TYPES) as DataType[];
export const typedInputName = (d: DataType): string => `x_${d.toLowerCase()}`;

/** One input per datatype, shape [batch, 2], each passed through by Identity. */
export function allTypesModel(): Uint8Array {
  const g = createGraphBuilder({ graphName: 'all_types', seed: 1 });
  const io = TYPED_DATATYPES.map((d) => ({ d, out: g.addNode('Identity', [typedInputName(d)], {}, `y_${d.toLowerCase()}`) }));
  return g.encodeModel({
    inputs: io.map(({ d }) => ({ name: typedInputName(d), elemType: ELEM_TYPES[d], dims: ['batch', 2] })),
    outputs: io.map(({ d, out }) => ({ name: out, elemType: ELEM_TYPES[d], dims: ['batch', 2] })),
  });
}

const INT_RANGES: Partial<Record<DataType, [number, number]>> = {
  INT8: [-128, 127],
  INT16: [-32768, 32767],
  INT32: [-(2 ** 31), 2 ** 31 - 1],
  UINT8: [0, 255],
  UINT16: [0, 65535],
  UINT32: [0, 2 ** 32 - 1],
};
const INT64_RANGES = { INT64: [-(2n ** 63n), 2n ** 63n - 1n], UINT64: [0n, 2n ** 64n - 1n] } as const;

/** Values every datatype's tensor must take: its boundaries and values in between. */
function fittingElement(d: DataType): fc.Arbitrary<unknown> {
  if (d === 'BOOL') return fc.constantFrom(true, false, 0, 1);
  if (d === 'BYTES') return fc.string({ unit: 'grapheme', maxLength: 8 });
  if (d === 'INT64' || d === 'UINT64') {
    const [lo, hi] = INT64_RANGES[d];
    return fc.oneof(
      fc.bigInt({ min: lo, max: hi }).map(String),
      fc.constantFrom(String(lo), String(hi)),
      fc.integer({ min: d === 'UINT64' ? 0 : -(2 ** 31), max: 2 ** 31 }),
      fc.constant(Number.MAX_SAFE_INTEGER),
    );
  }
  const range = INT_RANGES[d];
  if (range) return fc.oneof(fc.integer({ min: range[0], max: range[1] }), fc.constantFrom(...range));
  if (d === 'FP16') return fc.oneof(fc.double({ min: -65504, max: 65504, noNaN: true }), fc.constantFrom(65504, -65504, 65519, 6e-8, -0));
  if (d === 'FP32')
    return fc.oneof(fc.float({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(3.4028234663852886e38, -3.4028235e38, 1.401298464324817e-45, 1e-50));
  return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(1.7976931348623157e308, 5e-324, -0));
}

/** Values that do not fit the datatype; RawJson ones are written as is (JSON.parse reads 1e400 as Infinity). */
function unfitElement(d: DataType): fc.Arbitrary<unknown> {
  const infinities = [new RawJson('1e400'), new RawJson('-1e400'), new RawJson('1e999')];
  if (d === 'BOOL') return fc.constantFrom<unknown>(2, -1, 0.5, 'true', 'false', '1', null, ...infinities);
  if (d === 'BYTES') return fc.constantFrom<unknown>(1, 0, true, null, { a: 1 });
  if (d === 'INT64' || d === 'UINT64') {
    const [lo, hi] = INT64_RANGES[d];
    return fc.oneof(
      fc.bigInt({ min: hi + 1n, max: hi * 4n }).map(String),
      fc.bigInt({ min: lo - 2n ** 64n, max: lo - 1n }).map(String),
      // Integers past 2^53 as JSON numbers cannot be held exactly.
      fc.constantFrom<unknown>(new RawJson('9223372036854775807'), 2 ** 63, -(2 ** 60), 1.5, '1.5', '1e3', ...infinities),
    );
  }
  const range = INT_RANGES[d];
  if (range)
    return fc.oneof(
      fc.integer({ min: range[1] + 1, max: range[1] + 2 ** 20 }),
      fc.integer({ min: range[0] - 2 ** 20, max: range[0] - 1 }),
      fc.double({ min: range[0], max: range[1], noNaN: true }).filter((v) => !Number.isInteger(v)),
      fc.constantFrom<unknown>(2 ** 53, -(2 ** 64), ...infinities),
    );
  if (d === 'FP16')
    return fc.oneof(
      fc.double({ min: 65520, max: 1e300, noNaN: true }).map((v) => (v > 1e200 ? -v : v)),
      fc.constantFrom(...infinities),
    );
  if (d === 'FP32') return fc.oneof(fc.double({ min: 3.5e38, max: 1e308, noNaN: true }), fc.constantFrom(-3.5e38, -1e308, ...infinities));
  return fc.constantFrom(...infinities);
}

/** A body for the all-types model: valid, or with one element that does not fit (`unfit` names it). */
export const typedJobBody: fc.Arbitrary<{ text: string; unfit?: DataType }> = fc
  .record({
    batch: fc.integer({ min: 1, max: 2 }),
    values: fc.tuple(...TYPED_DATATYPES.map((d) => fc.array(fittingElement(d), { minLength: 4, maxLength: 4 }))),
    bad: fc.option(
      fc.record({ d: fc.constantFrom(...TYPED_DATATYPES), at: fc.nat(3) }).chain(({ d, at }) => unfitElement(d).map((value) => ({ d, at, value }))),
      { nil: undefined, freq: 2 },
    ),
    nested: fc.boolean(),
  })
  .map(({ batch, values, bad, nested }) => {
    const inputs = TYPED_DATATYPES.map((d, i) => {
      const flat = values[i]!.slice(0, batch * 2);
      if (bad?.d === d) flat[bad.at % flat.length] = bad.value;
      const data = nested ? [flat.slice(0, 2), ...(batch === 2 ? [flat.slice(2, 4)] : [])] : flat;
      return { name: typedInputName(d), datatype: d, shape: [batch, 2], data };
    });
    return { text: toJsonText({ model: TYPED_MODEL, inputs }), unfit: bad?.d };
  });
