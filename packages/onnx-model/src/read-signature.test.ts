import { readFileSync } from 'node:fs';
import onnxProto from 'onnx-proto';
import { describe, expect, it } from 'vitest';
import { buildCnnModel, buildMlpModel } from './demo-models.ts';
import { OnnxModelError } from './onnx-model-error.ts';
import { readOnnxSignature } from './read-signature.ts';
import { buildTransformerModel } from './transformer-model.ts';
import { resolveOcrDetectionModelPath } from './write-demo-models.ts';

const { onnx } = onnxProto;
type IGraphProto = onnxProto.onnx.IGraphProto;
type IValueInfoProto = onnxProto.onnx.IValueInfoProto;

const tensor = (name: string, elemType: number, dims: Array<number | string>): IValueInfoProto => ({
  name,
  type: { tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) } } },
});

const encodeModel = (graph: IGraphProto, model: onnxProto.onnx.IModelProto = {}): Uint8Array =>
  onnx.ModelProto.encode({ irVersion: 8, opsetImport: [{ domain: '', version: 17 }], graph, ...model }).finish();

const identityGraph = (input: IValueInfoProto, output: IValueInfoProto = tensor('y', 1, ['n'])): IGraphProto => ({
  name: 'g',
  node: [{ opType: 'Identity', input: [input.name!], output: [output.name!] }],
  input: [input],
  output: [output],
});

/** Runs `fn` and returns the OnnxModelError it throws, failing on anything else. */
function catchModelError(fn: () => unknown): OnnxModelError {
  try {
    fn();
  } catch (err) {
    if (err instanceof OnnxModelError) return err;
    throw new Error(`expected OnnxModelError, got ${String(err)}`, { cause: err });
  }
  throw new Error('expected OnnxModelError, but nothing was thrown');
}

/** The generated decoder reads every field; it is the oracle for the field-walking reader. */
function decodeWithGeneratedCode(bytes: Uint8Array) {
  const graph = onnx.ModelProto.decode(bytes).graph!;
  const initializers = new Set((graph.initializer ?? []).map((t) => t.name));
  const spec = (v: IValueInfoProto) => ({
    name: v.name,
    // Decoded messages carry dim_value 0 on the prototype; the oneof says which field was set.
    shape: v.type!.tensorType!.shape!.dim!.map((d) => ((d as onnxProto.onnx.TensorShapeProto.Dimension).value === 'dimValue' ? Number(d.dimValue) : -1)),
  });
  return { inputs: (graph.input ?? []).filter((v) => !initializers.has(v.name)).map(spec), outputs: (graph.output ?? []).map(spec) };
}

describe('readOnnxSignature on the demo models', () => {
  it('reads the MLP', () => {
    expect(readOnnxSignature(buildMlpModel())).toEqual({
      inputs: [{ name: 'features', datatype: 'FP32', shape: [-1, 64] }],
      outputs: [{ name: 'logits', datatype: 'FP32', shape: [-1, 16] }],
      batchable: true,
    });
  });

  it('reads the CNN', () => {
    expect(readOnnxSignature(buildCnnModel())).toEqual({
      inputs: [{ name: 'image', datatype: 'FP32', shape: [-1, 3, 32, 32] }],
      outputs: [{ name: 'logits', datatype: 'FP32', shape: [-1, 10] }],
      batchable: true,
    });
  });

  it('reads the transformer: two INT64 inputs, two outputs', () => {
    expect(readOnnxSignature(buildTransformerModel())).toEqual({
      inputs: [
        { name: 'input_ids', datatype: 'INT64', shape: [-1, -1] },
        { name: 'attention_mask', datatype: 'INT64', shape: [-1, -1] },
      ],
      outputs: [
        { name: 'last_hidden_state', datatype: 'FP32', shape: [-1, -1, 64] },
        { name: 'pooled', datatype: 'FP32', shape: [-1, 64] },
      ],
      batchable: true,
    });
  });

  it('reads the PaddleOCR detection model: x FP32 [?,3,?,?], batchable', () => {
    const bytes = readFileSync(resolveOcrDetectionModelPath());
    const signature = readOnnxSignature(bytes);
    console.log(`ocr-det signature: ${JSON.stringify(signature)}`);
    expect(signature).toEqual({
      inputs: [{ name: 'x', datatype: 'FP32', shape: [-1, 3, -1, -1] }],
      outputs: [{ name: 'sigmoid_0.tmp_0', datatype: 'FP32', shape: [-1, 1, -1, -1] }],
      batchable: true,
    });
  });

  it('agrees with the generated onnx-proto decoder', () => {
    for (const bytes of [buildMlpModel(), buildCnnModel(), buildTransformerModel(), readFileSync(resolveOcrDetectionModelPath())]) {
      const { inputs, outputs } = readOnnxSignature(bytes);
      const strip = (specs: typeof inputs) => specs.map(({ name, shape }) => ({ name, shape }));
      expect({ inputs: strip(inputs), outputs: strip(outputs) }).toEqual(decodeWithGeneratedCode(bytes));
    }
  });
});

describe('readOnnxSignature on crafted models', () => {
  it('leaves out inputs that are initializers (models before IR v4 list them)', () => {
    const graph = identityGraph(tensor('x', 1, ['n']));
    graph.input!.push(tensor('w', 1, [3]));
    graph.initializer = [{ name: 'w', dims: [3], dataType: 1, floatData: [1, 2, 3] }];
    graph.sparseInitializer = [
      { values: { name: 's', dims: [1], dataType: 1, floatData: [1] }, indices: { dims: [1], dataType: 7, int64Data: [0] }, dims: [4] },
    ];
    graph.input!.push(tensor('s', 1, [4]));
    expect(readOnnxSignature(encodeModel(graph)).inputs.map((t) => t.name)).toEqual(['x']);
  });

  it('accepts a model whose weights are external data', () => {
    const graph = identityGraph(tensor('x', 1, ['n', 2]), tensor('y', 1, ['n', 2]));
    graph.initializer = [{ name: 'w', dims: [1 << 20], dataType: 1, dataLocation: 1, externalData: [{ key: 'location', value: 'weights.bin' }] }];
    expect(readOnnxSignature(encodeModel(graph))).toMatchObject({ batchable: true, inputs: [{ name: 'x', shape: [-1, 2] }] });
  });

  it('treats a missing dim_value and a negative one as dynamic, and flags fixed batch dims as not batchable', () => {
    const graph = identityGraph(
      { name: 'x', type: { tensorType: { elemType: 1, shape: { dim: [{}, { dimValue: -1 }, { dimValue: 7 }] } } } },
      tensor('y', 1, [2, 7]),
    );
    expect(readOnnxSignature(encodeModel(graph))).toEqual({
      inputs: [{ name: 'x', datatype: 'FP32', shape: [-1, -1, 7] }],
      outputs: [{ name: 'y', datatype: 'FP32', shape: [2, 7] }],
      batchable: false,
    });
  });

  it('reads STRING tensors (ONNX type 8) as BYTES, in and out', () => {
    const graph = identityGraph(tensor('text', 8, ['n', 2]), tensor('labels', 8, ['n', 2]));
    expect(readOnnxSignature(encodeModel(graph))).toEqual({
      inputs: [{ name: 'text', datatype: 'BYTES', shape: [-1, 2] }],
      outputs: [{ name: 'labels', datatype: 'BYTES', shape: [-1, 2] }],
      batchable: true,
    });
  });

  it.each([
    ['BFLOAT16', 16],
    ['COMPLEX64', 14],
    ['UNDEFINED', 0],
    ['21', 21],
  ])('rejects element type %s as MODEL_UNSUPPORTED, naming the type and the tensor', (typeName, elemType) => {
    const err = catchModelError(() => readOnnxSignature(encodeModel(identityGraph(tensor('text', elemType, ['n'])))));
    expect(err.code).toBe('MODEL_UNSUPPORTED');
    expect(err.message).toContain(`input "text" has element type ${typeName}`);
  });

  it('rejects unsupported output types too', () => {
    const err = catchModelError(() => readOnnxSignature(encodeModel(identityGraph(tensor('x', 1, ['n']), tensor('labels', 15, ['n'])))));
    expect(err).toMatchObject({ code: 'MODEL_UNSUPPORTED', message: expect.stringContaining('output "labels" has element type COMPLEX128') });
  });

  it.each([
    ['sequence', { sequenceType: { elemType: { tensorType: { elemType: 1 } } } }],
    ['map', { mapType: { keyType: 7, valueType: { tensorType: { elemType: 1 } } } }],
    ['optional', { optionalType: { elemType: { tensorType: { elemType: 1 } } } }],
    ['sparse tensor', { sparseTensorType: { elemType: 1 } }],
  ])('rejects a %s input as MODEL_UNSUPPORTED', (kind, type) => {
    const err = catchModelError(() => readOnnxSignature(encodeModel(identityGraph({ name: 'seq', type }))));
    expect(err).toMatchObject({ code: 'MODEL_UNSUPPORTED', message: expect.stringContaining(`input "seq" is a ${kind}`) });
  });

  it('rejects a tensor of unknown rank and one without a type', () => {
    const noShape = catchModelError(() => readOnnxSignature(encodeModel(identityGraph({ name: 'x', type: { tensorType: { elemType: 1 } } }))));
    expect(noShape).toMatchObject({ code: 'MODEL_UNSUPPORTED', message: expect.stringContaining('input "x" has no declared shape') });
    const noType = catchModelError(() => readOnnxSignature(encodeModel(identityGraph({ name: 'x' }))));
    expect(noType).toMatchObject({ code: 'MODEL_INVALID', message: expect.stringContaining('input "x" has no type') });
  });

  it.each([
    ['no graph', onnx.ModelProto.encode({ irVersion: 8, opsetImport: [{ version: 17 }] }).finish(), 'MODEL_INVALID', 'no graph'],
    ['no ir_version', encodeModel(identityGraph(tensor('x', 1, ['n'])), { irVersion: null }), 'MODEL_INVALID', 'no ir_version'],
    ['no opset_import', encodeModel(identityGraph(tensor('x', 1, ['n'])), { opsetImport: [] }), 'MODEL_INVALID', 'no opset_import'],
    ['no outputs', encodeModel({ input: [tensor('x', 1, ['n'])] }), 'MODEL_INVALID', 'no outputs'],
    ['no inputs', encodeModel({ output: [tensor('y', 1, ['n'])] }), 'MODEL_UNSUPPORTED', 'no inputs'],
    ['an unnamed input', encodeModel(identityGraph(tensor('', 1, ['n']))), 'MODEL_INVALID', 'has no name'],
    ['a duplicate input', encodeModel({ input: [tensor('x', 1, [1]), tensor('x', 1, [1])], output: [tensor('y', 1, [1])] }), 'MODEL_INVALID', 'more than once'],
    ['a 2,000-character name', encodeModel(identityGraph(tensor('x'.repeat(2000), 1, ['n']))), 'MODEL_UNSUPPORTED', '2000 characters'],
    // Found by apps/api/tests/fuzz.test.ts: stored as jsonb, such a name made the upload a 500.
    ['a NUL in an input name', encodeModel(identityGraph(tensor('x\u0000', 1, ['n']))), 'MODEL_INVALID', 'NUL character'],
    ['a NUL in an output name', encodeModel(identityGraph(tensor('x', 1, ['n']), tensor('y\u0000', 1, ['n']))), 'MODEL_INVALID', 'NUL character'],
  ])('rejects a model with %s', (_, bytes, code, text) => {
    expect(catchModelError(() => readOnnxSignature(bytes))).toMatchObject({ code, message: expect.stringContaining(text) });
  });

  it('steps over a large initializer without decoding it', () => {
    const graph = identityGraph(tensor('x', 1, ['n']));
    graph.initializer = [{ name: 'big', dims: [8 << 20], dataType: 1, rawData: new Uint8Array(32 << 20) }];
    const bytes = encodeModel(graph);
    const started = performance.now();
    expect(readOnnxSignature(bytes).inputs).toHaveLength(1);
    expect(performance.now() - started).toBeLessThan(50);
  });
});
