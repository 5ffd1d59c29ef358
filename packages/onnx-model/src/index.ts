export { OnnxModelError, type OnnxModelErrorCode } from './onnx-model-error.ts';
export { readOnnxSignature } from './read-signature.ts';
export {
  createGraphBuilder,
  ElemType,
  IR_VERSION,
  ML_OPSET_VERSION,
  OPSET_VERSION,
  type AttributeValue,
  type Dim,
  type OpDomain,
  type GraphBuilder,
  type GraphTensor,
} from './build-graph.ts';
export { buildCnnModel, buildMlpModel } from './demo-models.ts';
export { buildTransformerModel } from './transformer-model.ts';
export { buildResnet50Model, RESNET_IMAGE_SIZE } from './resnet-model.ts';
export { buildLabelsModel, LABELS_CLASSES, LABELS_UNKNOWN, LABELS_VOCABULARY } from './string-model.ts';
export { buildDemoTokenizer, demoVocabulary } from './demo-tokenizer.ts';
export { resolveOcrDetectionModelPath, writeDemoModels, writeOnDemandModel, type DemoModel } from './write-demo-models.ts';
export { createSeededRandom } from './seeded-random.ts';
