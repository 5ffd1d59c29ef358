// ResNet-50 as an exported, fused model has it: torchvision's layout (v1.5, the
// stride on the 3x3 conv), every batch norm folded into its conv's bias. A
// realistic model beside the toy CNN: ~25.5 M weights (~100 MB), so it is
// written on demand (write-demo-models.ts), not with the default set.
import { createGraphBuilder, ElemType, type GraphBuilder } from './build-graph.ts';

/** torchvision's resnet50: blocks and bottleneck width per stage, the 1x1 out is 4× the width. */
const STAGES = [
  { blocks: 3, width: 64, stride: 1 },
  { blocks: 4, width: 128, stride: 2 },
  { blocks: 6, width: 256, stride: 2 },
  { blocks: 3, width: 512, stride: 2 },
] as const;
const EXPANSION = 4;
const STEM_WIDTH = 64;
const CLASSES = 1000;
export const RESNET_IMAGE_SIZE = 224;

/** He init (variance 2/fanIn) for a conv a ReLU follows. */
const HE_GAIN = Math.sqrt(6);
/**
 * The last 1x1 of a branch, which is added to the shortcut before the ReLU, at a quarter of He: as a trained net's last
 * batch norm of a block scales its branch down, so 16 residual adds do not double the activations' variance 16 times.
 */
const BRANCH_OUT_GAIN = HE_GAIN / 4;
/** A projection shortcut keeps its input's scale (no ReLU follows it alone). */
const PROJECTION_GAIN = Math.sqrt(3);

export interface ResnetOptions {
  /** Every channel count ÷ this (1: ResNet-50 itself): the same graph, narrow, for a test that runs it cheaply. @default 1 */
  widthDivisor?: number;
}

/**
 * `image` FP32 [batch,3,224,224] → 7x7/2 conv 64 + Relu → 3x3/2 MaxPool → bottleneck stages of 3, 4, 6, 3 blocks
 * (1x1 → 3x3 → 1x1 convs, a 1x1 projection shortcut opening each stage, Add → Relu) → GlobalAveragePool → Flatten →
 * Gemm 2048→1000 = `logits` FP32 [batch,1000] (no softmax, as torchvision exports it). Weights are seeded (He init).
 */
export function buildResnet50Model(options: ResnetOptions = {}): Uint8Array {
  const divisor = options.widthDivisor ?? 1;
  const channels = (n: number): number => n / divisor;
  const g = createGraphBuilder({ graphName: 'resnet50', seed: 0x72736e });

  let x = g.addNode('Relu', [addConv(g, 'conv1', 'image', { inC: 3, outC: channels(STEM_WIDTH), kernel: 7, stride: 2, gain: HE_GAIN })]);
  x = g.addNode('MaxPool', [x], { kernel_shape: [3, 3], pads: [1, 1, 1, 1], strides: [2, 2] });
  let inC = channels(STEM_WIDTH);
  STAGES.forEach((stage, s) => {
    for (let block = 0; block < stage.blocks; block += 1) {
      const width = channels(stage.width);
      x = addBottleneck(g, `layer${s + 1}.${block}`, x, { inC, width, stride: block === 0 ? stage.stride : 1 });
      inC = width * EXPANSION;
    }
  });
  x = g.addNode('Flatten', [g.addNode('GlobalAveragePool', [x])], { axis: 1 });
  const w = g.addWeight('fc.weight', [CLASSES, inC], inC);
  const b = g.addWeight('fc.bias', [CLASSES], inC);
  g.addNode('Gemm', [x, w, b], { transB: 1 }, 'logits');
  return g.encodeModel({
    inputs: [{ name: 'image', elemType: ElemType.FLOAT, dims: ['batch', 3, RESNET_IMAGE_SIZE, RESNET_IMAGE_SIZE] }],
    outputs: [{ name: 'logits', elemType: ElemType.FLOAT, dims: ['batch', CLASSES] }],
  });
}

interface ConvShape {
  inC: number;
  outC: number;
  kernel: number;
  stride: number;
  gain: number;
}

/** A k×k conv padded to keep the size (only the stride shrinks it); its bias is the folded batch norm's shift. */
function addConv(g: GraphBuilder, prefix: string, x: string, c: ConvShape): string {
  const fanIn = c.inC * c.kernel * c.kernel;
  const w = g.addWeight(`${prefix}.weight`, [c.outC, c.inC, c.kernel, c.kernel], fanIn, c.gain);
  const b = g.addWeight(`${prefix}.bias`, [c.outC], fanIn);
  const pad = (c.kernel - 1) / 2;
  return g.addNode('Conv', [x, w, b], { kernel_shape: [c.kernel, c.kernel], pads: [pad, pad, pad, pad], strides: [c.stride, c.stride] });
}

/** 1x1 (width) → Relu → 3x3 (width, the block's stride) → Relu → 1x1 (4× width), plus the shortcut, then Relu. */
function addBottleneck(g: GraphBuilder, prefix: string, x: string, b: { inC: number; width: number; stride: number }): string {
  const outC = b.width * EXPANSION;
  let h = g.addNode('Relu', [addConv(g, `${prefix}.conv1`, x, { inC: b.inC, outC: b.width, kernel: 1, stride: 1, gain: HE_GAIN })]);
  h = g.addNode('Relu', [addConv(g, `${prefix}.conv2`, h, { inC: b.width, outC: b.width, kernel: 3, stride: b.stride, gain: HE_GAIN })]);
  h = addConv(g, `${prefix}.conv3`, h, { inC: b.width, outC, kernel: 1, stride: 1, gain: BRANCH_OUT_GAIN });
  const needsProjection = b.stride !== 1 || b.inC !== outC;
  const shortcut = needsProjection ? addConv(g, `${prefix}.downsample`, x, { inC: b.inC, outC, kernel: 1, stride: b.stride, gain: PROJECTION_GAIN }) : x;
  return g.addNode('Relu', [g.addNode('Add', [h, shortcut])]);
}
