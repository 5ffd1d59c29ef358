// A demo model with string (BYTES) tensors in and out, the kind a label lookup
// or a tokenizer inside the graph gives: ONNX STRING tensors, served as BYTES.
import { createGraphBuilder, ElemType } from './build-graph.ts';

/** The words `buildLabelsModel` knows, in id order; any other word is id -1 and label `<unk>`. */
export const LABELS_VOCABULARY = ['cat', 'dog', 'bird', 'fish', 'oak', 'pine', 'rose', 'fern'] as const;
export const LABELS_CLASSES = ['animal', 'animal', 'animal', 'animal', 'plant', 'plant', 'plant', 'plant'] as const;
export const LABELS_UNKNOWN = '<unk>';

/**
 * `words` BYTES [batch,words] → `echo` BYTES [batch,words] (Identity: any text
 * comes back as it went in), `ids` INT64 [batch,words] (ai.onnx.ml LabelEncoder
 * over `LABELS_VOCABULARY`, -1 when unknown) and `classes` BYTES [batch,words]
 * (LabelEncoder from word to class, `<unk>` when unknown). Every element maps
 * alone, so rows are independent and jobs batch along dim 0.
 */
export function buildLabelsModel(): Uint8Array {
  const g = createGraphBuilder({ graphName: 'labels', seed: 0x6c6162 });
  const keys = { strings: [...LABELS_VOCABULARY] };
  g.addNode('Identity', ['words'], {}, 'echo');
  g.addNode('LabelEncoder', ['words'], { keys_strings: keys, values_int64s: LABELS_VOCABULARY.map((_, i) => i), default_int64: -1 }, 'ids', 'ai.onnx.ml');
  g.addNode(
    'LabelEncoder',
    ['words'],
    { keys_strings: keys, values_strings: { strings: [...LABELS_CLASSES] }, default_string: { string: LABELS_UNKNOWN } },
    'classes',
    'ai.onnx.ml',
  );
  const dims = ['batch', 'words'];
  return g.encodeModel({
    inputs: [{ name: 'words', elemType: ElemType.STRING, dims }],
    outputs: [
      { name: 'echo', elemType: ElemType.STRING, dims },
      { name: 'ids', elemType: ElemType.INT64, dims },
      { name: 'classes', elemType: ElemType.STRING, dims },
    ],
  });
}
