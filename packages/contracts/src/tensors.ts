import { Type, type Static } from '@sinclair/typebox';
import { DATATYPES } from './datatypes.ts';
import { StringEnum } from './string-enum.ts';

export const DataTypeSchema = StringEnum(DATATYPES, { description: 'KServe v2 datatype' });

/** KServe v2 / Open Inference Protocol request tensor. */
export const InputTensorSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256 }),
    datatype: Type.String({ maxLength: 16, description: `One of ${DATATYPES.join(', ')}` }),
    shape: Type.Array(Type.Integer({ minimum: 0 }), { maxItems: 16 }),
    data: Type.Union([
      Type.Array(Type.Unknown(), { description: 'Row-major values, flat or nested' }),
      Type.String({ description: 'Base64 of the little-endian bytes (the fast path)' }),
    ]),
  },
  { additionalProperties: false },
);
export type InputTensor = Static<typeof InputTensorSchema>;

/** The binary tensor data extension's per-tensor parameter: the tensor's bytes follow the JSON header (framed or multipart bodies). */
export const BinaryDataSizeSchema = Type.Integer({
  minimum: 0,
  description: 'The bytes of this tensor in the binary section after the JSON header (Inference-Header-Content-Length), in input order',
});

/**
 * A /v1 submit's input: its values as JSON `data` (or base64), or its bytes
 * elsewhere: `parameters.binary_data_size` in a framed body, a multipart part
 * `input:<name>`, or `upload` (an upload's id, POST /v1/uploads). Exactly one.
 */
export const SubmitInputTensorSchema = Type.Object(
  {
    ...InputTensorSchema.properties,
    data: Type.Optional(InputTensorSchema.properties.data),
    upload: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The id of an upload holding the raw bytes (POST /v1/uploads)' })),
    parameters: Type.Optional(Type.Object({ binary_data_size: Type.Optional(BinaryDataSizeSchema) }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);
export type SubmitInputTensor = Static<typeof SubmitInputTensorSchema>;

/** An output tensor: inline data, or a short-lived URL to its raw little-endian bytes. */
export const OutputTensorSchema = Type.Object({
  name: Type.String(),
  datatype: DataTypeSchema,
  shape: Type.Array(Type.Integer()),
  data: Type.Optional(Type.Union([Type.Array(Type.Any()), Type.String()])),
  url: Type.Optional(Type.String({ description: 'Presigned URL of the raw little-endian bytes' })),
  bytes: Type.Integer(),
});
export type OutputTensor = Static<typeof OutputTensorSchema>;

/**
 * How a tensor is kept in Postgres (DESIGN invariant 5): its header plus, when
 * small, where its bytes are: a job's inputs in a segment (`segment`, `offset`:
 * one S3 object per group of submits, so they never pass through the WAL), or
 * inline in the job row (`at`: their offset in the row's input_data /
 * output_data bytea, outputs and inputs kept where segments are off; rows
 * written before migration 0022 hold base64 text in `b64` instead); when large,
 * the S3 key of its raw bytes (`key`).
 */
export const StoredTensorSchema = Type.Object({
  name: Type.String(),
  datatype: DataTypeSchema,
  shape: Type.Array(Type.Integer()),
  bytes: Type.Integer(),
  at: Type.Optional(Type.Integer({ minimum: 0, description: "Offset of the inline bytes in the row's data column" })),
  b64: Type.Optional(Type.String({ description: 'Inline bytes as base64 (rows written before migration 0022)' })),
  key: Type.Optional(Type.String()),
  segment: Type.Optional(Type.String({ description: 'Name of the segment holding the bytes from `offset` (inputSegmentName)' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Offset of the bytes in the segment object' })),
});
/**
 * A stored tensor in memory: an inline one read from (or going to) its row
 * carries its bytes in `data` (a view of the row's bytea); packages/db maps
 * `data` to and from `at`, packages/storage's tensor store reads either.
 */
export type StoredTensor = Static<typeof StoredTensorSchema> & { data?: Uint8Array };
