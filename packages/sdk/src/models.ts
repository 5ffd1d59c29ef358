import type { Model } from '@inferq/contracts';
import type { HttpClient } from './http.ts';

export interface ModelUpload {
  /** Lowercase letters, digits, `.`, `_`, `-`; an existing name gets its next version. */
  name: string;
  /** The .onnx file. */
  file: Blob | Uint8Array;
  maxBatchSize?: number;
  maxBatchDelayMs?: number;
}

export interface ModelsApi {
  /** The latest version of each model. */
  list(): Promise<Model[]>;
  /** The latest version of `name`. */
  get(name: string): Promise<Model>;
  upload(upload: ModelUpload): Promise<Model>;
}

function toFormData({ name, file, maxBatchSize, maxBatchDelayMs }: ModelUpload): FormData {
  const form = new FormData();
  form.set('name', name);
  if (maxBatchSize !== undefined) form.set('maxBatchSize', String(maxBatchSize));
  if (maxBatchDelayMs !== undefined) form.set('maxBatchDelayMs', String(maxBatchDelayMs));
  // The file goes last so the server has the text fields before it streams the bytes.
  const blob = file instanceof Blob ? file : new Blob([file as Uint8Array<ArrayBuffer>], { type: 'application/octet-stream' });
  form.set('file', blob, `${name}.onnx`);
  return form;
}

export function createModelsApi(http: HttpClient): ModelsApi {
  return {
    list: async () => (await http.json<{ items: Model[] }>('/v1/models')).body.items,
    get: async (name) => (await http.json<Model>(`/v1/models/${encodeURIComponent(name)}`)).body,
    upload: async (upload) => (await http.json<Model>('/v1/models', { method: 'POST', body: toFormData(upload) })).body,
  };
}
