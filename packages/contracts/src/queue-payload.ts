import { Type, type Static } from '@sinclair/typebox';

/**
 * What a queue job carries: ids and what the batcher groups by, nothing more
 * (DESIGN invariant 5). The inputs stay in the job's row; the worker reads
 * them when it claims the batch, so the queue holds well under 1 KiB a job.
 */
export const InferJobPayloadSchema = Type.Object({
  jobId: Type.String(),
  model: Type.String(),
  modelVersion: Type.Integer(),
  /** `batchShapeKey` of the inputs: jobs with equal keys can share a batch. */
  batchKey: Type.String(),
  createdAtMs: Type.Number(),
});
export type InferJobPayload = Static<typeof InferJobPayloadSchema>;
