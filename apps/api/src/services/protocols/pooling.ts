import { encodeTensorJson, type DataType, type EmbeddingSettings } from '@inferq/contracts';

const FLOAT_TYPES = new Set<DataType>(['FP16', 'FP32', 'FP64']);

/** A float output tensor's values from its little-endian bytes. */
export function floatValues(datatype: DataType, bytes: Uint8Array): Float64Array {
  if (!FLOAT_TYPES.has(datatype)) throw new Error(`embeddings are read from float outputs, not ${datatype}`);
  return Float64Array.from(encodeTensorJson(datatype, bytes) as number[]);
}

/**
 * One text's embedding from the model output of its job (batch 1): for
 * `mean`, the average over its first `tokens` positions (the real tokens;
 * padding follows them); for `cls`, position 0; for `none`, the output as
 * is. Then the first `dimensions` values, scaled to unit length if the model
 * normalises.
 */
export function poolEmbedding(
  values: Float64Array,
  shape: readonly number[],
  tokens: number,
  settings: Pick<EmbeddingSettings, 'pooling' | 'normalize'>,
  dimensions?: number,
): Float64Array {
  const width = shape[shape.length - 1]!;
  let pooled: Float64Array;
  if (settings.pooling === 'mean') {
    pooled = new Float64Array(width);
    for (let t = 0; t < tokens; t++) for (let d = 0; d < width; d++) pooled[d]! += values[t * width + d]!;
    for (let d = 0; d < width; d++) pooled[d]! /= Math.max(tokens, 1);
  } else {
    pooled = values.subarray(0, width);
  }
  const kept = pooled.slice(0, dimensions ?? width);
  if (!settings.normalize) return kept;
  const norm = Math.sqrt(kept.reduce((sum, v) => sum + v * v, 0));
  return norm > 0 ? kept.map((v) => v / norm) : kept;
}
