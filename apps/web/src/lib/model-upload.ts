import { MODEL_NAME_PATTERN, type BatchingMode, type Pooling } from '@inferq/contracts';
import type { ModelUpload } from '@inferq/sdk';

/**
 * The upload form's state. Keys are the API's multipart field names, so a
 * problem's `/body/<field>` pointer names the form field it concerns.
 */
export interface UploadFields {
  name: string;
  file: File | null;
  /** Text of the number inputs; empty means "use the server's default". */
  maxBatchSize: string;
  maxBatchDelayMs: string;
  /** `auto`: the two numbers above become the bounds the worker picks size and delay within. */
  batching: BatchingMode;
  /** Sent with `auto` only. */
  latencyTargetMs: string;
  responseCache: boolean;
  /** A Hugging Face tokenizer.json; with one the model serves embeddings and the settings below apply. */
  tokenizer: File | null;
  /** Empty: the server picks from the output's rank. */
  pooling: Pooling | '';
  normalize: boolean;
  embeddingOutput: string;
  maxTokens: string;
}

export type UploadField = keyof UploadFields;

export const EMPTY_UPLOAD: Readonly<UploadFields> = {
  name: '',
  file: null,
  maxBatchSize: '',
  maxBatchDelayMs: '',
  batching: 'fixed',
  latencyTargetMs: '',
  responseCache: false,
  tokenizer: null,
  pooling: '',
  normalize: true,
  embeddingOutput: '',
  maxTokens: '',
};

export const isUploadField = (key: string): key is UploadField => Object.hasOwn(EMPTY_UPLOAD, key);

/** A model name suggested by a file name: `ResNet 50.onnx` → `resnet-50`. */
export const modelNameFromFile = (fileName: string): string =>
  fileName
    .replace(/\.onnx$/i, '')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 63);

const checkInteger = (text: string, min: number, max: number): string | undefined => {
  if (text.trim() === '') return undefined;
  const n = Number(text);
  return Number.isInteger(n) && n >= min && n <= max ? undefined : `Enter a whole number from ${min} to ${max}, or leave it empty for the default.`;
};

const optionalInt = (text: string) => (text.trim() === '' ? undefined : Number(text));

/** The same rules the API applies, checked before the upload so mistakes show at once. */
export function validateUpload(fields: UploadFields): Partial<Record<UploadField, string>> {
  const errors: Partial<Record<UploadField, string>> = {};
  if (!MODEL_NAME_PATTERN.test(fields.name)) {
    errors.name = fields.name ? 'Use 1–63 lowercase letters, digits, ".", "_" or "-", starting with a letter or digit.' : 'Enter a model name.';
  }
  if (!fields.file) errors.file = 'Choose an .onnx file.';
  else if (!/\.onnx$/i.test(fields.file.name)) errors.file = 'The file must be an ONNX model (.onnx).';
  const batch = checkInteger(fields.maxBatchSize, 1, 4096);
  if (batch) errors.maxBatchSize = batch;
  const delay = checkInteger(fields.maxBatchDelayMs, 0, 60_000);
  if (delay) errors.maxBatchDelayMs = delay;
  const latencyTarget = fields.batching === 'auto' ? checkInteger(fields.latencyTargetMs, 1, 600_000) : undefined;
  if (latencyTarget) errors.latencyTargetMs = latencyTarget;
  // Whether the model can serve embeddings at all only the server can tell (it reads the signature).
  const maxTokens = fields.tokenizer ? checkInteger(fields.maxTokens, 1, 1_000_000) : undefined;
  if (maxTokens) errors.maxTokens = maxTokens;
  return errors;
}

/**
 * The SDK request for valid fields. `fixed` is the server's default, so only `auto` is sent, with its
 * latency target; the embedding settings go only with a tokenizer, as the API requires.
 */
export function toModelUpload(fields: UploadFields & { file: File }): ModelUpload {
  const { tokenizer } = fields;
  return {
    name: fields.name,
    file: fields.file,
    maxBatchSize: optionalInt(fields.maxBatchSize),
    maxBatchDelayMs: optionalInt(fields.maxBatchDelayMs),
    ...(fields.batching === 'auto' ? { batching: 'auto', latencyTargetMs: optionalInt(fields.latencyTargetMs) } : {}),
    responseCache: fields.responseCache,
    embedding: tokenizer
      ? {
          tokenizer,
          pooling: fields.pooling || undefined,
          normalize: fields.normalize,
          output: fields.embeddingOutput.trim() || undefined,
          maxTokens: optionalInt(fields.maxTokens),
        }
      : undefined,
  };
}
