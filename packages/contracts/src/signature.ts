import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from './string-enum.ts';
import { DATATYPES, type DataType } from './datatypes.ts';
import type { ErrorCode } from './errors.ts';

/** A dim of -1 is dynamic (symbolic or unknown in the ONNX graph). */
export const TensorSpecSchema = Type.Object(
  {
    name: Type.String(),
    datatype: StringEnum(DATATYPES),
    shape: Type.Array(Type.Integer({ minimum: -1 })),
  },
  { $id: 'TensorSpec' },
);
export type TensorSpec = Static<typeof TensorSpecSchema>;

export const ModelSignatureSchema = Type.Object({
  inputs: Type.Array(TensorSpecSchema),
  outputs: Type.Array(TensorSpecSchema),
  /** True when every input and output has a dynamic first dim, so jobs can be stacked along it. */
  batchable: Type.Boolean(),
});
export type ModelSignature = Static<typeof ModelSignatureSchema>;

export interface TensorHeader {
  name: string;
  datatype: DataType;
  shape: number[];
}

export interface SignatureProblem {
  code: ErrorCode;
  detail: string;
  /** JSON pointer into the request body. */
  pointer: string;
}

/** True when every input and output has a dynamic leading dim. */
export const isBatchableSignature = (inputs: TensorSpec[], outputs: TensorSpec[]): boolean =>
  inputs.length > 0 && [...inputs, ...outputs].every((t) => t.shape.length > 0 && t.shape[0] === -1);

/**
 * Checks request tensors against a model signature: names, datatypes, ranks,
 * fixed dims, and (for batchable models) one batch size across inputs.
 * Returns every problem found, in input order.
 */
export function checkInputsAgainstSignature(tensors: readonly TensorHeader[], signature: ModelSignature): SignatureProblem[] {
  const problems: SignatureProblem[] = [];
  const specs = new Map(signature.inputs.map((s) => [s.name, s]));
  const seen = new Set<string>();
  let batch: number | undefined;
  tensors.forEach((t, i) => {
    const at = `/inputs/${i}`;
    const spec = specs.get(t.name);
    if (!spec) {
      problems.push({
        code: 'INPUT_UNKNOWN',
        pointer: `${at}/name`,
        detail: `input "${t.name}" is not in the model signature (expected ${[...specs.keys()].join(', ')})`,
      });
      return;
    }
    if (seen.has(t.name)) {
      problems.push({ code: 'INPUT_DUPLICATE', pointer: `${at}/name`, detail: `input "${t.name}" is given more than once` });
      return;
    }
    seen.add(t.name);
    if (t.datatype !== spec.datatype) {
      problems.push({ code: 'INPUT_DATATYPE_MISMATCH', pointer: `${at}/datatype`, detail: `input "${t.name}" must be ${spec.datatype}, got ${t.datatype}` });
    }
    const expected = `[${spec.shape.map((d) => (d === -1 ? '?' : d)).join(',')}]`;
    if (t.shape.length !== spec.shape.length || spec.shape.some((d, k) => d !== -1 && d !== t.shape[k])) {
      problems.push({
        code: 'INPUT_SHAPE_MISMATCH',
        pointer: `${at}/shape`,
        detail: `input "${t.name}" must have shape ${expected}, got [${t.shape.join(',')}]`,
      });
      return;
    }
    if (signature.batchable) {
      if (t.shape[0] === 0) {
        problems.push({ code: 'INPUT_SHAPE_MISMATCH', pointer: `${at}/shape/0`, detail: `input "${t.name}" has an empty batch dimension` });
      } else if (batch === undefined) batch = t.shape[0];
      else if (batch !== t.shape[0]) {
        problems.push({ code: 'INPUT_BATCH_MISMATCH', pointer: `${at}/shape/0`, detail: `input "${t.name}" has batch ${t.shape[0]}, other inputs ${batch}` });
      }
    }
  });
  signature.inputs.forEach((spec) => {
    if (!seen.has(spec.name)) {
      problems.push({ code: 'INPUT_MISSING', pointer: '/inputs', detail: `input "${spec.name}" is required` });
    }
  });
  return problems;
}

/** Key under which jobs can share a batch: every input's non-batch dims. */
export const batchShapeKey = (tensors: readonly TensorHeader[]): string =>
  tensors
    .map((t) => `${t.name}:${t.shape.slice(1).join('x')}`)
    .sort()
    .join('|');
