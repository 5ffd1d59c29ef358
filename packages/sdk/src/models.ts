import type { Model, ModelRouting, ModelRoutingBody } from '@inferq/contracts';
import type { HttpClient } from './http.ts';

export interface ModelUpload {
  /** Lowercase letters, digits, `.`, `_`, `-`; an existing name gets its next version. */
  name: string;
  /** The .onnx file. */
  file: Blob | Uint8Array;
  maxBatchSize?: number;
  maxBatchDelayMs?: number;
  /** Answer jobs whose inputs equal an earlier succeeded job's with its stored result (deterministic models only). */
  responseCache?: boolean;
}

export interface ModelsApi {
  /** The latest version of each model. */
  list(): Promise<Model[]>;
  /** The latest version of `name`. */
  get(name: string): Promise<Model>;
  /** Every version of `name`, newest first. */
  versions(name: string): Promise<Model[]>;
  upload(upload: ModelUpload): Promise<Model>;
  /** How jobs naming `name` without a version are split between its versions; empty `versions` when the latest serves them all. */
  getRouting(name: string): Promise<ModelRouting>;
  /**
   * Replaces the routing table (scope models:write, audited). Promote: `[{ version, weight: 100 }]`;
   * `[]` removes routing so the latest version serves.
   */
  setRouting(name: string, versions: ModelRoutingBody['versions']): Promise<ModelRouting>;
}

function toFormData({ name, file, maxBatchSize, maxBatchDelayMs, responseCache }: ModelUpload): FormData {
  const form = new FormData();
  form.set('name', name);
  if (maxBatchSize !== undefined) form.set('maxBatchSize', String(maxBatchSize));
  if (maxBatchDelayMs !== undefined) form.set('maxBatchDelayMs', String(maxBatchDelayMs));
  if (responseCache !== undefined) form.set('responseCache', String(responseCache));
  // The file goes last so the server has the text fields before it streams the bytes.
  const blob = file instanceof Blob ? file : new Blob([file as Uint8Array<ArrayBuffer>], { type: 'application/octet-stream' });
  form.set('file', blob, `${name}.onnx`);
  return form;
}

export function createModelsApi(http: HttpClient): ModelsApi {
  return {
    list: async () => (await http.json<{ items: Model[] }>('/v1/models')).body.items,
    get: async (name) => (await http.json<Model>(`/v1/models/${encodeURIComponent(name)}`)).body,
    versions: async (name) => (await http.json<{ items: Model[] }>(`/v1/models/${encodeURIComponent(name)}/versions`)).body.items,
    upload: async (upload) => (await http.json<Model>('/v1/models', { method: 'POST', body: toFormData(upload) })).body,
    getRouting: async (name) => (await http.json<ModelRouting>(`/v1/models/${encodeURIComponent(name)}/routing`)).body,
    setRouting: async (name, versions) =>
      (await http.json<ModelRouting>(`/v1/models/${encodeURIComponent(name)}/routing`, { method: 'PUT', body: { versions } })).body,
  };
}
