import type { Batch } from '@inferq/contracts';
import type { HttpClient } from './http.ts';

export interface BatchesApi {
  /** One session run: the model artifact, worker and device it ran on, and its jobs with their share of the device time. Admin only. */
  get(id: string): Promise<Batch>;
}

export function createBatchesApi(http: HttpClient): BatchesApi {
  return {
    get: async (id) => (await http.json<Batch>(`/v1/inference-batches/${encodeURIComponent(id)}`)).body,
  };
}
