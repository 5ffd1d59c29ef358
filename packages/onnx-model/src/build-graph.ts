// A small builder for ONNX graphs, encoded with the generated onnx-proto code.
// It only knows what the demo models need: float and int64 initializers,
// single-output nodes (of the default domain or ai.onnx.ml), and
// int/ints/float/string/strings attributes.
import onnxProto from 'onnx-proto';
import { createSeededRandom } from './seeded-random.ts';

const { onnx } = onnxProto;

/** TensorProto.DataType numbers: the demo models use FLOAT and INT64; tests declare graph inputs of the others. */
export const ElemType = {
  FLOAT: 1,
  UINT8: 2,
  INT8: 3,
  UINT16: 4,
  INT16: 5,
  INT32: 6,
  INT64: 7,
  STRING: 8,
  BOOL: 9,
  FLOAT16: 10,
  DOUBLE: 11,
  UINT32: 12,
  UINT64: 13,
} as const;
export type ElemType = (typeof ElemType)[keyof typeof ElemType];

/** A fixed size, or a dim_param name for a dynamic dim. */
export type Dim = number | string;

export interface GraphTensor {
  name: string;
  elemType: ElemType;
  dims: Dim[];
}

/** number → INT, number[] → INTS, {float} → FLOAT (a float that happens to be whole must not become INT), {string} → STRING, {strings} → STRINGS. */
export type AttributeValue = number | number[] | { float: number } | { string: string } | { strings: string[] };

/** The operator sets a node can come from: the default domain, or the classic-ML one (LabelEncoder, …). */
export type OpDomain = '' | 'ai.onnx.ml';

export interface GraphBuilder {
  /**
   * Random weights, uniform in ±gain/sqrt(fanIn): gain 1 is PyTorch's default init, √6 He's (variance 2/fanIn, which
   * keeps a ReLU stack's activations at one scale); either way activations stay finite.
   */
  addWeight(name: string, dims: number[], fanIn: number, gain?: number): string;
  addFloatConstant(name: string, dims: number[], values: readonly number[]): string;
  addInt64Constant(name: string, dims: number[], values: readonly number[]): string;
  /** Adds a node and returns its output's name (`output`, or a generated one). */
  addNode(opType: string, inputs: string[], attributes?: Record<string, AttributeValue>, output?: string, domain?: OpDomain): string;
  encodeModel(io: { inputs: GraphTensor[]; outputs: GraphTensor[] }): Uint8Array;
}

export const IR_VERSION = 8;
export const OPSET_VERSION = 17;
/** ai.onnx.ml opset 2: LabelEncoder maps strings, int64s and floats to one another. */
export const ML_OPSET_VERSION = 2;

export function createGraphBuilder(options: { graphName: string; seed: number }): GraphBuilder {
  const random = createSeededRandom(options.seed);
  const initializers: onnxProto.onnx.ITensorProto[] = [];
  const nodes: onnxProto.onnx.INodeProto[] = [];

  const addTensor = (name: string, dims: number[], elemType: ElemType, rawData: Uint8Array): string => {
    initializers.push({ name, dims, dataType: elemType, rawData });
    return name;
  };

  return {
    addWeight(name, dims, fanIn, gain = 1) {
      const bound = gain / Math.sqrt(fanIn);
      // Straight into a Float32Array: ResNet-50's 25 M weights as a number[] first took seconds and a gigabyte.
      const values = new Float32Array(countElements(dims));
      for (let i = 0; i < values.length; i += 1) values[i] = (random() * 2 - 1) * bound;
      return addTensor(name, dims, ElemType.FLOAT, encodeFloats(values));
    },
    addFloatConstant(name, dims, values) {
      return addTensor(name, dims, ElemType.FLOAT, encodeFloats(values));
    },
    addInt64Constant(name, dims, values) {
      return addTensor(name, dims, ElemType.INT64, encodeInt64s(values));
    },
    addNode(opType, inputs, attributes = {}, output, domain = '') {
      const index = nodes.length;
      const outputName = output ?? `${opType.toLowerCase()}_${index}`;
      const attribute = Object.entries(attributes).map(([name, value]) => encodeAttribute(name, value));
      // The default domain is left unset, so the models built before domains came encode byte for byte as they did.
      nodes.push({ name: `${opType}_${index}`, opType, ...(domain ? { domain } : {}), input: inputs, output: [outputName], attribute });
      return outputName;
    },
    encodeModel({ inputs, outputs }) {
      const opsetImport = [{ domain: '', version: OPSET_VERSION }];
      if (nodes.some((n) => n.domain === 'ai.onnx.ml')) opsetImport.push({ domain: 'ai.onnx.ml', version: ML_OPSET_VERSION });
      const model: onnxProto.onnx.IModelProto = {
        irVersion: IR_VERSION,
        producerName: 'inferq',
        opsetImport,
        graph: { name: options.graphName, node: nodes, initializer: initializers, input: inputs.map(encodeValueInfo), output: outputs.map(encodeValueInfo) },
      };
      return onnx.ModelProto.encode(model).finish();
    },
  };
}

const utf8 = new TextEncoder();
const countElements = (dims: readonly number[]): number => dims.reduce((n, d) => n * d, 1);

const isLittleEndianHost = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

// raw_data is little-endian by the ONNX spec, whatever the host.
function encodeFloats(values: ArrayLike<number>): Uint8Array {
  if (isLittleEndianHost) {
    const floats = values instanceof Float32Array ? values : Float32Array.from(values);
    return new Uint8Array(floats.buffer, floats.byteOffset, floats.byteLength);
  }
  const view = new DataView(new ArrayBuffer(values.length * 4));
  for (let i = 0; i < values.length; i += 1) view.setFloat32(i * 4, values[i]!, true);
  return new Uint8Array(view.buffer);
}

function encodeInt64s(values: readonly number[]): Uint8Array {
  const view = new DataView(new ArrayBuffer(values.length * 8));
  values.forEach((v, i) => view.setBigInt64(i * 8, BigInt(v), true));
  return new Uint8Array(view.buffer);
}

function encodeAttribute(name: string, value: AttributeValue): onnxProto.onnx.IAttributeProto {
  const { AttributeType } = onnx.AttributeProto;
  if (Array.isArray(value)) return { name, type: AttributeType.INTS, ints: value };
  if (typeof value === 'number') return { name, type: AttributeType.INT, i: value };
  if ('string' in value) return { name, type: AttributeType.STRING, s: utf8.encode(value.string) };
  if ('strings' in value) return { name, type: AttributeType.STRINGS, strings: value.strings.map((v) => utf8.encode(v)) };
  return { name, type: AttributeType.FLOAT, f: value.float };
}

function encodeValueInfo({ name, elemType, dims }: GraphTensor): onnxProto.onnx.IValueInfoProto {
  const dim = dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d }));
  return { name, type: { tensorType: { elemType, shape: { dim } } } };
}
