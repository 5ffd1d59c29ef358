import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../string-enum.ts';
import { JOB_STATUSES } from '../job-status.ts';
import { EXAMPLE_JOB_ID, EXAMPLE_KEY_ID, EXAMPLE_TIME } from './examples.ts';
import { DateTimeInput } from './request-values.ts';

// Batch provenance (GET /v1/inference-batches/:id) and device-time accounting
// (GET /v1/usage): each batch's inference time is split over its jobs by
// their share of the batch's items (rows along the batch dimension).

const Uuid = Type.String({ format: 'uuid' });
const EXAMPLE_BATCH_ID = '0190a1b2-9d8e-7f6a-8b5c-4d3e2f1a0b9c';

export const BatchParamsSchema = Type.Object({ id: Uuid });

export const BatchSchema = Type.Object(
  {
    id: Uuid,
    model: Type.String(),
    modelVersion: Type.Integer(),
    modelSha256: Type.String({ description: 'sha256 of the model artifact that ran' }),
    workerId: Type.String(),
    device: Type.String({ description: '`cpu`, `cuda:N` or `webgpu:N`: what the worker was pinned to' }),
    provider: Type.String({ description: 'The execution provider the session ended on' }),
    size: Type.Integer({ description: 'Jobs in the batch' }),
    items: Type.Integer({ description: 'Rows along the batch dimension, over all its jobs' }),
    startedAt: Type.String({ format: 'date-time', description: 'When the worker claimed it' }),
    inferMs: Type.Number({ description: 'Device time of the one session run' }),
    jobs: Type.Array(
      Type.Object({
        id: Uuid,
        ownerKeyId: Uuid,
        status: StringEnum(JOB_STATUSES),
        items: Type.Integer(),
        queueMs: Type.Union([Type.Integer(), Type.Null()]),
        deviceMs: Type.Union([Type.Number(), Type.Null()], { description: "The job's share of inferMs (items ÷ the batch's items); null when it failed" }),
      }),
    ),
  },
  {
    examples: [
      {
        id: EXAMPLE_BATCH_ID,
        model: 'mlp',
        modelVersion: 2,
        modelSha256: 'dd0c9cb069581704e97163ab20b0ef2040b3e232f6c334bd556bb8b42f42f70c',
        workerId: 'box-cpu-4242',
        device: 'cpu',
        provider: 'cpu',
        size: 2,
        items: 4,
        startedAt: EXAMPLE_TIME,
        inferMs: 2.4,
        jobs: [
          { id: EXAMPLE_JOB_ID, ownerKeyId: EXAMPLE_KEY_ID, status: 'succeeded', items: 3, queueMs: 4, deviceMs: 1.8 },
          { id: '0190a1b2-7c3d-7e4f-8a5b-6c7d8e9f0a2c', ownerKeyId: EXAMPLE_KEY_ID, status: 'succeeded', items: 1, queueMs: 2, deviceMs: 0.6 },
        ],
      },
    ],
  },
);
export type Batch = Static<typeof BatchSchema>;

export const USAGE_GROUPS = ['key', 'model'] as const;

export const UsageQuerySchema = Type.Object(
  {
    from: Type.Optional(DateTimeInput({ description: 'Start (inclusive) of the finish-time range; default 24 hours before `to`' })),
    to: Type.Optional(DateTimeInput({ description: 'End (exclusive); default now' })),
    groupBy: Type.Optional(StringEnum(USAGE_GROUPS, { default: 'key', description: '`key`: per API key; `model`: per model and version' })),
  },
  { additionalProperties: false },
);
export type UsageQuery = Static<typeof UsageQuerySchema>;

const UsageFigures = {
  jobs: Type.Integer({ description: 'Jobs that succeeded in the range and were run (cache hits cost no device time and are not counted)' }),
  items: Type.Integer({ description: 'Their rows along the batch dimension' }),
  deviceMs: Type.Number({ description: 'Their share of batch device time, summed' }),
};

export const UsageSchema = Type.Object(
  {
    from: Type.String({ format: 'date-time' }),
    to: Type.String({ format: 'date-time' }),
    groupBy: StringEnum(USAGE_GROUPS),
    items: Type.Array(
      Type.Object({
        keyId: Type.Optional(Uuid),
        keyName: Type.Optional(Type.String()),
        model: Type.Optional(Type.String()),
        modelVersion: Type.Optional(Type.Integer()),
        ...UsageFigures,
      }),
      { description: 'Largest device time first. A non-admin key sees only its own jobs.' },
    ),
    total: Type.Object(UsageFigures),
  },
  {
    examples: [
      {
        from: '2025-06-01T09:30:00.000Z',
        to: EXAMPLE_TIME,
        groupBy: 'key',
        items: [{ keyId: EXAMPLE_KEY_ID, keyName: 'checkout-service', jobs: 1200, items: 1450, deviceMs: 5210.5 }],
        total: { jobs: 1200, items: 1450, deviceMs: 5210.5 },
      },
    ],
  },
);
export type Usage = Static<typeof UsageSchema>;
