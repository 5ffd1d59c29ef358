import { MODEL_NAME_PATTERN } from '@inferq/contracts';

export interface UploadFields {
  name: string;
  file: File | null;
  /** Text of the number inputs; empty means "use the server's default". */
  maxBatchSize: string;
  maxBatchDelayMs: string;
}

export type UploadField = keyof UploadFields;

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
  return errors;
}
