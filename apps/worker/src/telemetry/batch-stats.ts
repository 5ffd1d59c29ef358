/** What one batch came to: the batch runner returns it, the status tracker counts it. */
export interface BatchStats {
  batchId: string;
  model: string;
  modelVersion: number;
  batchSize: number;
  inferMs: number;
  /** Wall time the batch waited on its session: its turn behind other batches and its run. */
  sessionMs: number;
  queueWaitMs: number;
  succeeded: number;
  failed: number;
}
