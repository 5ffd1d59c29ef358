import { Type, type Static } from '@sinclair/typebox';
import { DataTypeSchema } from '../tensors.ts';
import { EXAMPLE_TIME } from './examples.ts';

// POST /v1/uploads: a presigned PUT URL for one large input tensor, named in a job input
// (`"upload": "<id>"`) instead of its data, as SageMaker asynchronous inference takes its input from S3.

export const CreateUploadBodySchema = Type.Object(
  {
    datatype: DataTypeSchema,
    shape: Type.Array(Type.Integer({ minimum: 0 }), { maxItems: 16, description: 'The tensor shape: every dimension concrete' }),
  },
  { additionalProperties: false, examples: [{ datatype: 'FP32', shape: [1, 3, 224, 224] }] },
);
export type CreateUploadBody = Static<typeof CreateUploadBodySchema>;

const EXAMPLE_UPLOAD_ID = '0190a1b2-9d8e-7f6a-8b5c-4d3e2f1a0b9c';

export const UploadSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'Name it in a job input: `{"name", "datatype", "shape", "upload": "<id>"}`' }),
    url: Type.String({ description: 'Presigned URL: PUT the raw little-endian bytes there, no credentials' }),
    method: Type.Literal('PUT'),
    headers: Type.Record(Type.String(), Type.String(), { description: 'Headers the PUT must carry as given: they are signed' }),
    bytes: Type.Integer({ description: 'The exact size the PUT must have: product(shape) × the datatype size' }),
    expiresAt: Type.String({ format: 'date-time', description: 'The URL and the unused upload expire then (UPLOAD_TTL_S)' }),
  },
  {
    examples: [
      {
        id: EXAMPLE_UPLOAD_ID,
        url: `https://s3.example.com/inferq/uploads/2025-06-02/${EXAMPLE_UPLOAD_ID}.bin?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=…`,
        method: 'PUT',
        headers: { 'content-length': '602112', 'content-type': 'application/octet-stream' },
        bytes: 602_112,
        expiresAt: new Date(Date.parse(EXAMPLE_TIME) + 3_600_000).toISOString(),
      },
    ],
  },
);
export type Upload = Static<typeof UploadSchema>;
