// Reads a model's input and output signature straight from the ONNX protobuf,
// so the API can validate uploads and requests without loading onnxruntime
// (DESIGN invariant 3). Only ModelProto.graph's inputs, outputs and
// initializer names are read; nodes and weights are stepped over unread.
import { DATATYPES, dataTypeFromOnnx, isBatchableSignature, ONNX_TYPE_NAMES, type ModelSignature, type TensorSpec } from '@inferq/contracts';
import { OnnxModelError } from './onnx-model-error.ts';
import { createProtoReader, readFields, readNested, readSafeInt64, readString, type ProtoReader } from './proto-walk.ts';
import { readValueInfo, type ValueInfo } from './read-value-info.ts';

/** Longer names are not real tensor names, and would bloat every stored signature. */
const MAX_NAME_LENGTH = 1024;

interface GraphParts {
  inputs: ValueInfo[];
  outputs: ValueInfo[];
  initializerNames: Set<string>;
}

/**
 * Parses ONNX ModelProto bytes and returns the graph's inputs (less those that
 * are initializers) and outputs. Throws OnnxModelError and nothing else,
 * whatever the bytes.
 */
export function readOnnxSignature(bytes: Uint8Array): ModelSignature {
  if (!(bytes instanceof Uint8Array)) throw new OnnxModelError('MODEL_INVALID', 'the model must be given as bytes');
  if (bytes.byteLength === 0) throw new OnnxModelError('MODEL_INVALID', 'the file is empty, not an ONNX model');
  let graph: GraphParts;
  try {
    graph = readModelProto(createProtoReader(bytes));
  } catch (err) {
    if (err instanceof OnnxModelError) throw err;
    // protobufjs throws RangeError/Error on truncated or garbled bytes.
    const reason = err instanceof Error ? err.message : 'undecodable bytes';
    throw new OnnxModelError('MODEL_INVALID', `the file is not a valid ONNX model: ${reason}`, { cause: err });
  }
  const inputs = graph.inputs.filter((v) => !graph.initializerNames.has(v.name)).map((v) => toTensorSpec(v, 'input'));
  const outputs = graph.outputs.map((v) => toTensorSpec(v, 'output'));
  if (inputs.length === 0)
    throw new OnnxModelError('MODEL_UNSUPPORTED', 'the model graph has no inputs (other than initializers); inferq serves models that take input');
  if (outputs.length === 0) throw new OnnxModelError('MODEL_INVALID', 'the model graph has no outputs');
  checkUniqueNames(inputs, 'input');
  checkUniqueNames(outputs, 'output');
  return { inputs, outputs, batchable: isBatchableSignature(inputs, outputs) };
}

function readModelProto(reader: ProtoReader): GraphParts {
  const parts: GraphParts = { inputs: [], outputs: [], initializerNames: new Set() };
  let hasIrVersion = false;
  let hasGraph = false;
  let opsetCount = 0;
  readFields(reader, (field, wireType) => {
    if (field === 1) {
      readSafeInt64(reader, wireType, 'ir_version');
      hasIrVersion = true;
    } else if (field === 7) {
      // Protobuf merges a repeated singular message field, so a second graph adds to the first.
      readGraphProto(reader, wireType, parts);
      hasGraph = true;
    } else if (field === 8) {
      opsetCount += 1;
      return false;
    } else return false;
    return true;
  });
  // onnxruntime refuses models without these too; checking them also catches
  // files cut short after the graph, since writers put them around it.
  if (!hasGraph) throw new OnnxModelError('MODEL_INVALID', 'the file is not a valid ONNX model: it has no graph');
  if (!hasIrVersion) throw new OnnxModelError('MODEL_INVALID', 'the file is not a valid ONNX model: it has no ir_version');
  if (opsetCount === 0) throw new OnnxModelError('MODEL_INVALID', 'the file is not a valid ONNX model: it has no opset_import');
  return parts;
}

function readGraphProto(reader: ProtoReader, wireType: number, parts: GraphParts): void {
  readNested(reader, wireType, 'graph', (field, wt) => {
    if (field === 11) parts.inputs.push(readValueInfo(reader, wt, 'graph input'));
    else if (field === 12) parts.outputs.push(readValueInfo(reader, wt, 'graph output'));
    else if (field === 5) parts.initializerNames.add(readTensorName(reader, wt, 'initializer'));
    else if (field === 15) parts.initializerNames.add(readSparseTensorName(reader, wt));
    else return false;
    return true;
  });
}

/** TensorProto.name (field 8); the data fields around it are skipped, not copied. */
function readTensorName(reader: ProtoReader, wireType: number, what: string): string {
  let name = '';
  readNested(reader, wireType, what, (field, wt) => {
    if (field !== 8) return false;
    name = readString(reader, wt, `${what} name`);
    return true;
  });
  return name;
}

/** A sparse initializer is named by its `values` tensor (SparseTensorProto field 1). */
function readSparseTensorName(reader: ProtoReader, wireType: number): string {
  let name = '';
  readNested(reader, wireType, 'sparse initializer', (field, wt) => {
    if (field !== 1) return false;
    name = readTensorName(reader, wt, 'sparse initializer values');
    return true;
  });
  return name;
}

function toTensorSpec(info: ValueInfo, role: 'input' | 'output'): TensorSpec {
  if (info.name === '') throw new OnnxModelError('MODEL_INVALID', `a graph ${role} has no name`);
  if (info.name.length > MAX_NAME_LENGTH)
    throw new OnnxModelError('MODEL_UNSUPPORTED', `a graph ${role} name is ${info.name.length} characters long (at most ${MAX_NAME_LENGTH})`);
  // Signatures are stored as jsonb, which cannot hold a NUL (protobufjs already turns invalid UTF-8 into U+FFFD).
  if (info.name.includes('\u0000')) throw new OnnxModelError('MODEL_INVALID', `a graph ${role} name holds a NUL character`);
  const label = `${role} "${info.name}"`;
  if (info.kind === 'none') throw new OnnxModelError('MODEL_INVALID', `${label} has no type`);
  if (info.kind !== 'tensor') {
    throw new OnnxModelError('MODEL_UNSUPPORTED', `${label} is a ${info.kind}; inferq serves dense tensor inputs and outputs only`);
  }
  const datatype = dataTypeFromOnnx(info.elemType);
  if (!datatype) {
    const typeName = ONNX_TYPE_NAMES[info.elemType] ?? String(info.elemType);
    throw new OnnxModelError('MODEL_UNSUPPORTED', `${label} has element type ${typeName}, which inferq does not serve (supported: ${DATATYPES.join(', ')})`);
  }
  // Requests are checked against the rank, so a tensor of unknown rank cannot be served.
  if (!info.dims) throw new OnnxModelError('MODEL_UNSUPPORTED', `${label} has no declared shape (unknown rank)`);
  return { name: info.name, datatype, shape: info.dims };
}

function checkUniqueNames(specs: TensorSpec[], role: 'input' | 'output'): void {
  const seen = new Set<string>();
  for (const { name } of specs) {
    if (seen.has(name)) throw new OnnxModelError('MODEL_INVALID', `${role} "${name}" is declared more than once`);
    seen.add(name);
  }
}
