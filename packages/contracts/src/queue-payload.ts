import { Type, type Static } from '@sinclair/typebox';
import { PRIORITIES } from './job-status.ts';
import { StringEnum } from './string-enum.ts';
import { StoredTensorSchema } from './tensors.ts';

/**
 * What a queue job carries besides what BullMQ already holds (the job id is
 * the queue job's id, the model its queue, the submit time its timestamp):
 * what the batcher groups by and, while the queue's budget allows, the
 * headers of the small inputs carried beside it (DESIGN invariant 5: Postgres
 * keeps them either way, the record).
 * Without them the worker reads the inputs from the job's row when it claims
 * the batch, and the entry holds under 1 KiB whatever the inputs weigh.
 */
export const InferJobPayloadSchema = Type.Object({
  modelVersion: Type.Integer(),
  /** `batchShapeKey` of the inputs: jobs with equal keys can share a batch. */
  batchKey: Type.String(),
  /** W3C trace context of the submitting request (`traceparent`, `tracestate`), when tracing is on: the worker's spans join its trace. */
  traceContext: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 512 }), { maxProperties: 4 })),
  /** The job's priority class; the queue job's BullMQ priority is its fair position within the class. */
  priority: Type.Optional(StringEnum(PRIORITIES)),
  /** The job's deadline (epoch ms): the worker closes its batch early to meet it, or expires it when it cannot. */
  deadlineAt: Type.Optional(Type.Integer()),
  /**
   * The headers of the inputs carried while the job waits (QUEUE_CARRIED_INPUTS_MB), each with its offset (`at`) in
   * the bytes Redis keeps beside the queue job: the worker's claim then reads only the columns that fence it.
   */
  inputs: Type.Optional(Type.Array(StoredTensorSchema)),
});
export type InferJobPayload = Static<typeof InferJobPayloadSchema>;
