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
 * How a tensor is kept in Postgres and Redis: header plus base64 bytes inline,
 * or the S3 key of its raw bytes when large (DESIGN invariant 5).
 */
export const StoredTensorSchema = Type.Object({
  name: Type.String(),
  datatype: DataTypeSchema,
  shape: Type.Array(Type.Integer()),
  bytes: Type.Integer(),
  b64: Type.Optional(Type.String()),
  key: Type.Optional(Type.String()),
});
export type StoredTensor = Static<typeof StoredTensorSchema>;
