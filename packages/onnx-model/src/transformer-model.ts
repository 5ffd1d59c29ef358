// A small transformer encoder with two inputs of a non-float datatype and two
// outputs, so signature checks and output splitting see more than one tensor.
import { createGraphBuilder, ElemType, type GraphBuilder } from './build-graph.ts';

const VOCAB_SIZE = 1000;
const MAX_SEQ_LEN = 128;
const MODEL_DIM = 64;
const HEADS = 4;
const HEAD_DIM = MODEL_DIM / HEADS;
const FFN_DIM = 128;
const LAYERS = 2;

/**
 * `input_ids` INT64 [batch,seq] and `attention_mask` INT64 [batch,seq] (seq ≤ 128,
 * ids < 1000) → token + position embeddings → two pre-LN encoder layers (4-head
 * self-attention with the mask as a large negative bias, FFN 64→128→64 with
 * Relu) → final LayerNorm = `last_hidden_state` FP32 [batch,seq,64];
 * `pooled` FP32 [batch,64] is its mean over the unmasked positions.
 */
export function buildTransformerModel(): Uint8Array {
  const g = createGraphBuilder({ graphName: 'transformer', seed: 0x746678 });
  const c = addSharedConstants(g);

  const tokens = g.addNode('Gather', [g.addWeight('embeddings.token', [VOCAB_SIZE, MODEL_DIM], 1), 'input_ids'], { axis: 0 });
  const seqLen = g.addNode('Gather', [g.addNode('Shape', ['input_ids']), c.one], { axis: 0 });
  const positionIds = g.addNode('Range', [c.zero, seqLen, c.one]);
  const positions = g.addNode('Gather', [g.addWeight('embeddings.position', [MAX_SEQ_LEN, MODEL_DIM], 1), positionIds], { axis: 0 });
  let x = g.addNode('Add', [tokens, positions]);

  // 0 where attended, -1e9 where masked: after Softmax masked keys weigh nothing.
  const mask = g.addNode('Cast', ['attention_mask'], { to: ElemType.FLOAT });
  const maskBias = g.addNode('Unsqueeze', [g.addNode('Mul', [g.addNode('Sub', [mask, c.oneFloat]), c.bigFloat]), c.axes12]);

  for (let layer = 0; layer < LAYERS; layer += 1) {
    const prefix = `layer${layer}`;
    x = g.addNode('Add', [x, addSelfAttention(g, prefix, addLayerNorm(g, `${prefix}.ln1`, x), maskBias, c)]);
    x = g.addNode('Add', [x, addFeedForward(g, prefix, addLayerNorm(g, `${prefix}.ln2`, x))]);
  }
  const hidden = addLayerNorm(g, 'final_ln', x, 'last_hidden_state');

  // Masked mean; the count is clamped to 1 so an all-zero mask gives zeros, not NaN.
  const mask3 = g.addNode('Unsqueeze', [mask, c.axis2]);
  const summed = g.addNode('ReduceSum', [g.addNode('Mul', [hidden, mask3]), c.axis1], { keepdims: 0 });
  const count = g.addNode('Max', [g.addNode('ReduceSum', [mask3, c.axis1], { keepdims: 0 }), c.oneFloat]);
  g.addNode('Div', [summed, count], {}, 'pooled');

  return g.encodeModel({
    inputs: [
      { name: 'input_ids', elemType: ElemType.INT64, dims: ['batch', 'seq'] },
      { name: 'attention_mask', elemType: ElemType.INT64, dims: ['batch', 'seq'] },
    ],
    outputs: [
      { name: 'last_hidden_state', elemType: ElemType.FLOAT, dims: ['batch', 'seq', MODEL_DIM] },
      { name: 'pooled', elemType: ElemType.FLOAT, dims: ['batch', MODEL_DIM] },
    ],
  });
}

type SharedConstants = ReturnType<typeof addSharedConstants>;

function addSharedConstants(g: GraphBuilder) {
  return {
    zero: g.addInt64Constant('const.zero', [], [0]),
    one: g.addInt64Constant('const.one', [], [1]),
    oneFloat: g.addFloatConstant('const.one_float', [], [1]),
    bigFloat: g.addFloatConstant('const.mask_scale', [], [1e9]),
    attentionScale: g.addFloatConstant('const.attention_scale', [], [1 / Math.sqrt(HEAD_DIM)]),
    axis1: g.addInt64Constant('const.axis1', [1], [1]),
    axis2: g.addInt64Constant('const.axis2', [1], [2]),
    axes12: g.addInt64Constant('const.axes12', [2], [1, 2]),
    // Reshape's 0 copies the input dim, so batch and seq stay dynamic.
    splitHeads: g.addInt64Constant('const.split_heads', [4], [0, 0, HEADS, HEAD_DIM]),
    mergeHeads: g.addInt64Constant('const.merge_heads', [3], [0, 0, MODEL_DIM]),
  };
}

function addLayerNorm(g: GraphBuilder, prefix: string, x: string, output?: string): string {
  const scale = g.addFloatConstant(`${prefix}.weight`, [MODEL_DIM], new Array<number>(MODEL_DIM).fill(1));
  const bias = g.addFloatConstant(`${prefix}.bias`, [MODEL_DIM], new Array<number>(MODEL_DIM).fill(0));
  return g.addNode('LayerNormalization', [x, scale, bias], { axis: -1, epsilon: { float: 1e-5 } }, output);
}

function addLinear(g: GraphBuilder, prefix: string, x: string, inDim: number, outDim: number): string {
  const w = g.addWeight(`${prefix}.weight`, [inDim, outDim], inDim);
  const b = g.addWeight(`${prefix}.bias`, [outDim], inDim);
  return g.addNode('Add', [g.addNode('MatMul', [x, w]), b]);
}

/** [batch,seq,64] → heads [batch,4,seq,16] (or [batch,4,16,seq] for keys, ready for q·kᵀ). */
function splitHeads(g: GraphBuilder, x: string, c: SharedConstants, perm: number[]): string {
  return g.addNode('Transpose', [g.addNode('Reshape', [x, c.splitHeads])], { perm });
}

function addSelfAttention(g: GraphBuilder, prefix: string, x: string, maskBias: string, c: SharedConstants): string {
  const q = splitHeads(g, addLinear(g, `${prefix}.attn.q`, x, MODEL_DIM, MODEL_DIM), c, [0, 2, 1, 3]);
  const k = splitHeads(g, addLinear(g, `${prefix}.attn.k`, x, MODEL_DIM, MODEL_DIM), c, [0, 2, 3, 1]);
  const v = splitHeads(g, addLinear(g, `${prefix}.attn.v`, x, MODEL_DIM, MODEL_DIM), c, [0, 2, 1, 3]);
  const scores = g.addNode('Add', [g.addNode('Mul', [g.addNode('MatMul', [q, k]), c.attentionScale]), maskBias]);
  const context = g.addNode('MatMul', [g.addNode('Softmax', [scores], { axis: -1 }), v]);
  const merged = g.addNode('Reshape', [g.addNode('Transpose', [context], { perm: [0, 2, 1, 3] }), c.mergeHeads]);
  return addLinear(g, `${prefix}.attn.out`, merged, MODEL_DIM, MODEL_DIM);
}

function addFeedForward(g: GraphBuilder, prefix: string, x: string): string {
  const h = g.addNode('Relu', [addLinear(g, `${prefix}.ffn.in`, x, MODEL_DIM, FFN_DIM)]);
  return addLinear(g, `${prefix}.ffn.out`, h, FFN_DIM, MODEL_DIM);
}
