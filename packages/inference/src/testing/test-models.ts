import { DataTypes, type DataType } from '@inferq/contracts';
import onnxProto from 'onnx-proto';

/** Tiny ONNX models built in memory for tests: no files to download or check in. */

const { onnx } = onnxProto;
type Dim = number | string;

interface ValueSpec {
  name: string;
  datatype: DataType;
  shape: Dim[];
}

interface NodeSpec {
  op: string;
  inputs: string[];
  outputs: string[];
  intAttrs?: Record<string, number>;
}

interface ModelSpec {
  inputs: ValueSpec[];
  outputs: ValueSpec[];
  nodes: NodeSpec[];
  floatInits?: Array<{ name: string; dims: number[]; values: number[] }>;
  int64Inits?: Array<{ name: string; dims: number[]; values: number[] }>;
}

const valueInfo = (v: ValueSpec) => ({
  name: v.name,
  type: {
    tensorType: {
      elemType: DataTypes[v.datatype].onnx,
      shape: { dim: v.shape.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
    },
  },
});

function buildModel(spec: ModelSpec): Uint8Array {
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: 'inferq-tests',
    opsetImport: [{ domain: '', version: 17 }],
    graph: {
      name: 'test',
      input: spec.inputs.map(valueInfo),
      output: spec.outputs.map(valueInfo),
      node: spec.nodes.map((n, i) => ({
        name: `${n.op}_${i}`,
        opType: n.op,
        input: n.inputs,
        output: n.outputs,
        attribute: Object.entries(n.intAttrs ?? {}).map(([name, i]) => ({ name, type: onnx.AttributeProto.AttributeType.INT, i })),
      })),
      initializer: [
        ...(spec.floatInits ?? []).map((t) => ({ name: t.name, dims: t.dims, dataType: DataTypes.FP32.onnx, floatData: t.values })),
        ...(spec.int64Inits ?? []).map((t) => ({ name: t.name, dims: t.dims, dataType: DataTypes.INT64.onnx, int64Data: t.values })),
      ],
    },
  });
  return onnx.ModelProto.encode(model).finish();
}

/** Deterministic values in [-1, 1) so expected outputs can be recomputed anywhere. */
export const patternValues = (count: number, seed = 1): number[] => Array.from({ length: count }, (_, i) => (((i + 1) * 7919 * seed) % 2000) / 1000 - 1);

/** Y = X·W + b with a dynamic batch dim: X [N,4] → Y [N,3]. */
export const linearModel = (): Uint8Array =>
  buildModel({
    inputs: [{ name: 'X', datatype: 'FP32', shape: ['N', 4] }],
    outputs: [{ name: 'Y', datatype: 'FP32', shape: ['N', 3] }],
    nodes: [
      { op: 'MatMul', inputs: ['X', 'W'], outputs: ['XW'] },
      { op: 'Add', inputs: ['XW', 'b'], outputs: ['Y'] },
    ],
    floatInits: [
      { name: 'W', dims: [4, 3], values: patternValues(12, 3) },
      { name: 'b', dims: [3], values: [0.5, -0.25, 1] },
    ],
  });

/** Two inputs of different datatypes: S = A + float(B) (FP32), D = B + B (INT64); A, B [N,3]. */
export const mixedTypesModel = (): Uint8Array =>
  buildModel({
    inputs: [
      { name: 'A', datatype: 'FP32', shape: ['N', 3] },
      { name: 'B', datatype: 'INT64', shape: ['N', 3] },
    ],
    outputs: [
      { name: 'S', datatype: 'FP32', shape: ['N', 3] },
      { name: 'D', datatype: 'INT64', shape: ['N', 3] },
    ],
    nodes: [
      { op: 'Cast', inputs: ['B'], outputs: ['Bf'], intAttrs: { to: DataTypes.FP32.onnx } },
      { op: 'Add', inputs: ['A', 'Bf'], outputs: ['S'] },
      { op: 'Add', inputs: ['B', 'B'], outputs: ['D'] },
    ],
  });

/** Sums over the batch dim (keepdims): output dim 0 is always 1, so batched outputs cannot be split per job. */
export const batchSumModel = (): Uint8Array =>
  buildModel({
    inputs: [{ name: 'X', datatype: 'FP32', shape: ['N', 3] }],
    outputs: [{ name: 'Y', datatype: 'FP32', shape: [1, 3] }],
    nodes: [{ op: 'ReduceSum', inputs: ['X', 'axes'], outputs: ['Y'] }],
    int64Inits: [{ name: 'axes', dims: [1], values: [0] }],
  });

/** `layers` chained square MatMul + Tanh of width `width`: heavy enough to keep a thread busy. */
export function heavyModel(width: number, layers: number): Uint8Array {
  const nodes: NodeSpec[] = [];
  let last = 'X';
  for (let i = 0; i < layers; i++) {
    nodes.push({ op: 'MatMul', inputs: [last, 'W'], outputs: [`m${i}`] });
    last = i === layers - 1 ? 'Y' : `t${i}`;
    nodes.push({ op: 'Tanh', inputs: [`m${i}`], outputs: [last] });
  }
  return buildModel({
    inputs: [{ name: 'X', datatype: 'FP32', shape: ['N', width] }],
    outputs: [{ name: 'Y', datatype: 'FP32', shape: ['N', width] }],
    nodes,
    floatInits: [{ name: 'W', dims: [width, width], values: patternValues(width * width, 5).map((v) => v / Math.sqrt(width)) }],
  });
}

/** Identity for one datatype: checks the typed-array mapping for FP16, BOOL, UINT8, INT64 and the rest. */
export const identityModel = (datatype: DataType, shape: Dim[] = ['N', 2]): Uint8Array =>
  buildModel({
    inputs: [{ name: 'X', datatype, shape }],
    outputs: [{ name: 'Y', datatype, shape }],
    nodes: [{ op: 'Identity', inputs: ['X'], outputs: ['Y'] }],
  });

/** Y = table[I] over a 4×2 table: an index out of range makes the run throw for that job only. */
export const gatherModel = (): Uint8Array =>
  buildModel({
    inputs: [{ name: 'I', datatype: 'INT64', shape: ['N'] }],
    outputs: [{ name: 'Y', datatype: 'FP32', shape: ['N', 2] }],
    nodes: [{ op: 'Gather', inputs: ['table', 'I'], outputs: ['Y'] }],
    floatInits: [{ name: 'table', dims: [4, 2], values: [0, 1, 10, 11, 20, 21, 30, 31] }],
  });
