import type { Batch } from '@inferq/contracts';
import type { HttpClient } from './http.ts';

/** Inference batches: the session runs a worker made, with their provenance (not the Batch API's batches, `client.batches`). */
export interface InferenceBatchesApi {
  /** One session run: the model artifact, worker and device it ran on, and its jobs with their share of the device time. Admin only. */
  get(id: string): Promise<Batch>;
}

export function createInferenceBatchesApi(http: HttpClient): InferenceBatchesApi {
  return {
    get: async (id) => (await http.json<Batch>(`/v1/inference-batches/${encodeURIComponent(id)}`)).body,
  };
}
