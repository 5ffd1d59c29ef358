import { Type, type Static } from '@sinclair/typebox';
import { StoredTensorSchema } from './tensors.ts';

/** What a queue job carries: ids and small inline inputs only (DESIGN invariant 5). */
export const InferJobPayloadSchema = Type.Object({
  jobId: Type.String(),
  model: Type.String(),
  modelVersion: Type.Integer(),
  inputs: Type.Array(StoredTensorSchema),
  createdAtMs: Type.Number(),
});
export type InferJobPayload = Static<typeof InferJobPayloadSchema>;
