import { Type, type Static } from '@sinclair/typebox';
import { NullableInteger } from '../nullable-integer.ts';
import { StringEnum } from '../string-enum.ts';
import { RETENTION_S_MIN, RetentionSecondsInput, RetentionSecondsSchema } from './keys.ts';

const MODEL_RETENTION_DESCRIPTION =
  'Seconds a finished job of this model (any version) is kept before it is purged to a tombstone; null: the ' +
  "owning key's retention, else the server's JOB_RETENTION_S. Wins over the key's";

/** `PATCH /v1/models/:name`: a model name's settings that are not per version. */
export const ModelSettingsBodySchema = Type.Object(
  { retentionS: RetentionSecondsInput(`${MODEL_RETENTION_DESCRIPTION}; null clears it`) },
  { additionalProperties: false, examples: [{ retentionS: 3_600 }] },
);
export type ModelSettingsBody = Static<typeof ModelSettingsBodySchema>;

/** Where a model's effective retention comes from: its own override, or the server's JOB_RETENTION_S. */
export const RETENTION_SOURCES = ['model', 'default'] as const;
export type RetentionSource = (typeof RETENTION_SOURCES)[number];

/** A model name's retention as read: the override and what applies. Nullable fields are type lists (see NullableInteger): ModelSchema nests it. */
const modelRetentionFields = {
  retentionS: RetentionSecondsSchema(MODEL_RETENTION_DESCRIPTION),
  effectiveS: Type.Integer({
    minimum: RETENTION_S_MIN,
    description:
      "Seconds the model's finished jobs are kept: `retentionS`, else the server's JOB_RETENTION_S. Without an override, " +
      "a key's own retention (PATCH /v1/keys/:id) still wins for that key's jobs",
  }),
  source: StringEnum(RETENTION_SOURCES, { description: "`model`: `effectiveS` is the override; `default`: the server's JOB_RETENTION_S" }),
  inputRetentionS: NullableInteger({
    minimum: 0,
    description:
      "Seconds a succeeded job's input tensors are kept (the server's JOB_INPUT_RETENTION_S; 0: dropped at the next sweep) unless it was " +
      'submitted with `keepInputs`; null: no sooner than the job itself',
  }),
};

const exampleRetention = { retentionS: 259_200, effectiveS: 259_200, source: 'model', inputRetentionS: 0 } as const;

/** `retention` of a model view (GET /v1/models, GET /v1/models/:name): the same for every version of the name. */
export const ModelRetentionSchema = Type.Object(
  {
    ...modelRetentionFields,
    updatedAt: Type.Optional(Type.String({ format: 'date-time', description: 'When the override was set; absent without one' })),
  },
  { examples: [{ ...exampleRetention, updatedAt: '2025-06-02T09:00:00.000Z' }] },
);
export type ModelRetention = Static<typeof ModelRetentionSchema>;

/** The answer to `PATCH /v1/models/:name`. */
export const ModelSettingsSchema = Type.Object(
  {
    name: Type.String(),
    ...modelRetentionFields,
    updatedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the retention was last set; null: never' }),
  },
  { examples: [{ name: 'mlp', ...exampleRetention, updatedAt: '2025-06-02T09:00:00.000Z' }] },
);
export type ModelSettings = Static<typeof ModelSettingsSchema>;
