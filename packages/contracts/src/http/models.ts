import { Type, type Static } from '@sinclair/typebox';
import { ModelSignatureSchema } from '../signature.ts';
import { FiniteInteger } from './request-values.ts';

export const BatchingSchema = Type.Object({
  maxBatchSize: Type.Integer({ minimum: 1, maximum: 4096 }),
  maxBatchDelayMs: Type.Integer({ minimum: 0, maximum: 60_000 }),
});
export type Batching = Static<typeof BatchingSchema>;

export const ModelSchema = Type.Object(
  {
    name: Type.String(),
    version: Type.Integer(),
    sha256: Type.String(),
    sizeBytes: Type.Integer(),
    signature: ModelSignatureSchema,
    batching: BatchingSchema,
    createdAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Model' },
);
export type Model = Static<typeof ModelSchema>;

export const ModelListSchema = Type.Object({ items: Type.Array(ModelSchema) });
/** `:name` of GET /v1/models/:name: a model name, or `name:version` for one version. */
export const ModelParamsSchema = Type.Object({ name: Type.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,62}(:[1-9][0-9]{0,8})?$' }) });

/** Model names: lowercase, digits, `.`, `_`, `-`; they name queues and S3 keys. */
export const MODEL_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/** Text fields of the multipart upload besides `file`. */
export const ModelUploadFieldsSchema = Type.Object(
  {
    name: Type.String({ pattern: MODEL_NAME_PATTERN.source }),
    maxBatchSize: Type.Optional(FiniteInteger({ minimum: 1, maximum: 4096 })),
    maxBatchDelayMs: Type.Optional(FiniteInteger({ minimum: 0, maximum: 60_000 })),
  },
  { additionalProperties: false },
);
export type ModelUploadFields = Static<typeof ModelUploadFieldsSchema>;
