// Deterministic demo models for the stack, the tests and the benchmarks: a
// tabular MLP and a small ResNet-style CNN (the transformer is in its own file).
// Every one has a dynamic leading "batch" dim, so the batcher can stack jobs.
import { createGraphBuilder, ElemType, type GraphBuilder } from './build-graph.ts';

/** `features` FP32 [batch,64] → Gemm 64→256 → Relu → Gemm 256→256 → Relu → Gemm 256→16 → `logits` FP32 [batch,16]. */
export function buildMlpModel(): Uint8Array {
  const g = createGraphBuilder({ graphName: 'mlp', seed: 0x6d6c70 });
  const widths = [64, 256, 256, 16];
  let x = 'features';
  for (let layer = 0; layer < widths.length - 1; layer += 1) {
    const inDim = widths[layer]!;
    const outDim = widths[layer + 1]!;
    const isLast = layer === widths.length - 2;
    // Weights stored [out, in] with transB=1, the layout PyTorch exports.
    const w = g.addWeight(`fc${layer}.weight`, [outDim, inDim], inDim);
    const b = g.addWeight(`fc${layer}.bias`, [outDim], inDim);
    x = g.addNode('Gemm', [x, w, b], { transB: 1 }, isLast ? 'logits' : undefined);
    if (!isLast) x = g.addNode('Relu', [x]);
  }
  return g.encodeModel({
    inputs: [{ name: 'features', elemType: ElemType.FLOAT, dims: ['batch', 64] }],
    outputs: [{ name: 'logits', elemType: ElemType.FLOAT, dims: ['batch', 16] }],
  });
}

/**
 * `image` FP32 [batch,3,32,32] → stem conv 3→16 → two residual blocks at 16
 * channels → strided conv to 32 channels at 16x16 → one residual block →
 * GlobalAveragePool → Flatten → Gemm 32→10 → `logits` FP32 [batch,10].
 */
export function buildCnnModel(): Uint8Array {
  const g = createGraphBuilder({ graphName: 'cnn', seed: 0x636e6e });
  let x = g.addNode('Relu', [addConv(g, 'stem', 'image', 3, 16, 1)]);
  x = addResidualBlock(g, 'block1', x, 16);
  x = addResidualBlock(g, 'block2', x, 16);
  x = g.addNode('Relu', [addConv(g, 'down', x, 16, 32, 2)]);
  x = addResidualBlock(g, 'block3', x, 32);
  x = g.addNode('GlobalAveragePool', [x]);
  x = g.addNode('Flatten', [x], { axis: 1 });
  const w = g.addWeight('fc.weight', [10, 32], 32);
  const b = g.addWeight('fc.bias', [10], 32);
  g.addNode('Gemm', [x, w, b], { transB: 1 }, 'logits');
  return g.encodeModel({
    inputs: [{ name: 'image', elemType: ElemType.FLOAT, dims: ['batch', 3, 32, 32] }],
    outputs: [{ name: 'logits', elemType: ElemType.FLOAT, dims: ['batch', 10] }],
  });
}

/** 3x3 convolution with padding 1, so only the stride changes the spatial size. */
function addConv(g: GraphBuilder, prefix: string, x: string, inChannels: number, outChannels: number, stride: number): string {
  const fanIn = inChannels * 9;
  const w = g.addWeight(`${prefix}.weight`, [outChannels, inChannels, 3, 3], fanIn);
  const b = g.addWeight(`${prefix}.bias`, [outChannels], fanIn);
  return g.addNode('Conv', [x, w, b], { kernel_shape: [3, 3], pads: [1, 1, 1, 1], strides: [stride, stride] });
}

/** Conv → Relu → Conv, plus the input (the skip), then Relu. */
function addResidualBlock(g: GraphBuilder, prefix: string, x: string, channels: number): string {
  const h = g.addNode('Relu', [addConv(g, `${prefix}.conv1`, x, channels, channels, 1)]);
  const y = addConv(g, `${prefix}.conv2`, h, channels, channels, 1);
  return g.addNode('Relu', [g.addNode('Add', [y, x])]);
}
