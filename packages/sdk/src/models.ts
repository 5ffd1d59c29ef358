import type { BatchingMode, Model, ModelQueue, ModelRetirement, ModelRouting, ModelRoutingBody, ModelSettings, Pooling } from '@inferq/contracts';
import type { HttpClient } from './http.ts';

export interface ModelUpload {
  /** Lowercase letters, digits, `.`, `_`, `-`; an existing name gets its next version. */
  name: string;
  /** The .onnx file. */
  file: Blob | Uint8Array;
  /** With `batching: 'auto'`, the largest batch size the worker may choose. */
  maxBatchSize?: number;
  /** With `batching: 'auto'`, the longest delay the worker may choose. */
  maxBatchDelayMs?: number;
  /** `auto`: each worker measures the model on its device and picks batch size and delay (default `fixed`). */
  batching?: BatchingMode;
  /** With `batching: 'auto'`: the p99 queue wait to keep under (default 100 ms). */
  latencyTargetMs?: number;
  /** Answer jobs whose inputs equal an earlier succeeded job's with its stored result (deterministic models only). */
  responseCache?: boolean;
  /** An encoder's Hugging Face tokenizer.json and embedding settings: the model then serves POST /v1/embeddings. */
  embedding?: { tokenizer: Blob | Uint8Array; pooling?: Pooling; normalize?: boolean; output?: string; maxTokens?: number };
}

const toBlob = (bytes: Blob | Uint8Array, type: string): Blob => (bytes instanceof Blob ? bytes : new Blob([bytes as Uint8Array<ArrayBuffer>], { type }));

export interface ModelsApi {
  /** The latest version of each model. */
  list(): Promise<Model[]>;
  /** The latest version of `name` (`name:version` for one), with `retention`: how long the name's finished jobs are kept. */
  get(name: string): Promise<Model>;
  /** Every version of `name`, newest first. */
  versions(name: string): Promise<Model[]>;
  upload(upload: ModelUpload): Promise<Model>;
  /**
   * Seconds a finished job of `name` (any version) is kept before it is purged (at least 60), winning over the
   * owning key's retention; null clears it (scope models:write, audited). Answers the retention that applies now
   * (`effectiveS`, `source`), as `get(name).retention` shows it.
   */
  setRetention(name: string, retentionS: number | null): Promise<ModelSettings>;
  /** How jobs naming `name` without a version are split between its versions; empty `versions` when the latest serves them all. */
  getRouting(name: string): Promise<ModelRouting>;
  /**
   * Replaces the routing table (scope models:write, audited). Promote: `[{ version, weight: 100 }]`;
   * `[]` removes routing so the latest version serves.
   */
  setRouting(name: string, versions: ModelRoutingBody['versions']): Promise<ModelRouting>;
  /**
   * Pauses the model's queue (admin, audited, idempotent): jobs are still accepted and kept queued,
   * none starts until `resume`. Returns the queue's depth and state.
   */
  pause(name: string): Promise<ModelQueue>;
  /** Resumes a paused model's queue (admin, audited, idempotent): workers start its queued jobs again. */
  resume(name: string): Promise<ModelQueue>;
  /**
   * Retires `version` of `name`, or every version without one (scope models:write, audited, idempotent): no new job
   * may name it (410 `MODEL_VERSION_RETIRED`), jobs already queued or running finish, and its artifact is deleted once
   * none is left. A version the routing table sends traffic to is refused (409 `MODEL_VERSION_ROUTED`) unless
   * `reroute`, which takes it out of the table.
   */
  retire(name: string, version?: number, options?: { reroute?: boolean }): Promise<ModelRetirement>;
}

function toFormData({ name, file, maxBatchSize, maxBatchDelayMs, batching, latencyTargetMs, responseCache, embedding }: ModelUpload): FormData {
  const form = new FormData();
  const fields = {
    name,
    maxBatchSize,
    maxBatchDelayMs,
    batching,
    latencyTargetMs,
    responseCache,
    pooling: embedding?.pooling,
    normalize: embedding?.normalize,
    embeddingOutput: embedding?.output,
    maxTokens: embedding?.maxTokens,
  };
  for (const [field, value] of Object.entries(fields)) if (value !== undefined) form.set(field, String(value));
  if (embedding) form.set('tokenizer', toBlob(embedding.tokenizer, 'application/json'), 'tokenizer.json');
  form.set('file', toBlob(file, 'application/octet-stream'), `${name}.onnx`);
  return form;
}

export function createModelsApi(http: HttpClient): ModelsApi {
  return {
    list: async () => (await http.json<{ items: Model[] }>('/v1/models')).body.items,
    get: async (name) => (await http.json<Model>(`/v1/models/${encodeURIComponent(name)}`)).body,
    versions: async (name) => (await http.json<{ items: Model[] }>(`/v1/models/${encodeURIComponent(name)}/versions`)).body.items,
    upload: async (upload) => (await http.json<Model>('/v1/models', { method: 'POST', body: toFormData(upload) })).body,
    setRetention: async (name, retentionS) =>
      (await http.json<ModelSettings>(`/v1/models/${encodeURIComponent(name)}`, { method: 'PATCH', body: { retentionS } })).body,
    getRouting: async (name) => (await http.json<ModelRouting>(`/v1/models/${encodeURIComponent(name)}/routing`)).body,
    setRouting: async (name, versions) =>
      (await http.json<ModelRouting>(`/v1/models/${encodeURIComponent(name)}/routing`, { method: 'PUT', body: { versions } })).body,
    pause: async (name) => (await http.json<ModelQueue>(`/v1/models/${encodeURIComponent(name)}/pause`, { method: 'POST' })).body,
    resume: async (name) => (await http.json<ModelQueue>(`/v1/models/${encodeURIComponent(name)}/resume`, { method: 'POST' })).body,
    retire: async (name, version, { reroute } = {}) => {
      const ref = version === undefined ? name : `${name}:${version}`;
      const query = reroute ? { reroute: true } : {};
      return (await http.json<ModelRetirement>(`/v1/models/${encodeURIComponent(ref)}`, { method: 'DELETE', query })).body;
    },
  };
}
