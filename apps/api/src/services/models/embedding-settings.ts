import type { EmbeddingSettings, ModelSignature, Pooling, TensorSpec } from '@inferq/contracts';
import { AppError } from '@inferq/core';

/** The inputs an encoder may take; the API fills each from the tokenizer's output. */
const TOKEN_INPUTS = ['input_ids', 'attention_mask', 'token_type_ids'] as const;
const TOKEN_DATATYPES = new Set(['INT64', 'INT32']);
/** When neither the upload, the tokenizer nor the model says how long a text may be. */
const DEFAULT_MAX_TOKENS = 512;

export interface EmbeddingUpload {
  pooling?: Pooling;
  normalize?: boolean;
  embeddingOutput?: string;
  maxTokens?: number;
}

const invalid = (field: string, detail: string): AppError =>
  new AppError('MODEL_UNSUPPORTED', `not an encoder /v1/embeddings can drive: ${detail}`, {
    errors: [{ pointer: `/body/${field}`, code: 'MODEL_UNSUPPORTED', detail }],
  });

/** A fixed sequence length the model's input_ids declare, if any (-1 or a symbolic dim is dynamic). */
const fixedSequenceLength = (signature: ModelSignature): number | undefined => {
  const dim = signature.inputs.find((t) => t.name === 'input_ids')?.shape[1];
  return dim !== undefined && dim > 0 ? dim : undefined;
};

/**
 * Checks that an uploaded model can serve embeddings and settles its
 * settings: inputs are token tensors [batch, seq] of INT64/INT32 with
 * input_ids among them; the output read is [batch, seq, dim] for mean/CLS
 * pooling or [batch, dim] when the export pools itself.
 */
export function embeddingSettingsFor(
  signature: ModelSignature,
  upload: EmbeddingUpload,
  tokenizer: { json: Record<string, unknown>; sha256: string },
): EmbeddingSettings {
  const names = new Set<string>(TOKEN_INPUTS);
  for (const t of signature.inputs) {
    if (!names.has(t.name)) throw invalid('file', `input "${t.name}" is not one of ${TOKEN_INPUTS.join(', ')}`);
    if (!TOKEN_DATATYPES.has(t.datatype) || t.shape.length !== 2)
      throw invalid('file', `input "${t.name}" must be INT64 or INT32 [batch, seq]; it is ${t.datatype} [${t.shape.join(', ')}]`);
  }
  if (!signature.inputs.some((t) => t.name === 'input_ids')) throw invalid('file', 'the model has no input_ids input');

  const outputName =
    upload.embeddingOutput ?? (signature.outputs.some((o) => o.name === 'last_hidden_state') ? 'last_hidden_state' : signature.outputs[0]?.name);
  const output: TensorSpec | undefined = signature.outputs.find((o) => o.name === outputName);
  if (!output) throw invalid('embeddingOutput', `output "${outputName}" is not one of ${signature.outputs.map((o) => o.name).join(', ')}`);
  if (!['FP32', 'FP16', 'FP64'].includes(output.datatype))
    throw invalid('embeddingOutput', `output "${output.name}" is ${output.datatype}; embeddings are read from a float output`);
  const pooling = upload.pooling ?? (output.shape.length === 2 ? 'none' : 'mean');
  const rank = pooling === 'none' ? 2 : 3;
  if (output.shape.length !== rank)
    throw invalid('pooling', `pooling "${pooling}" reads a rank-${rank} output; "${output.name}" has shape [${output.shape.join(', ')}]`);

  const truncation = tokenizer.json.truncation as { max_length?: unknown } | null | undefined;
  const fromTokenizer = typeof truncation?.max_length === 'number' ? truncation.max_length : undefined;
  const fixed = fixedSequenceLength(signature);
  const maxTokens = Math.min(upload.maxTokens ?? fromTokenizer ?? fixed ?? DEFAULT_MAX_TOKENS, fixed ?? Infinity);
  return { pooling, normalize: upload.normalize ?? true, output: output.name, maxTokens, tokenizerSha256: tokenizer.sha256 };
}
