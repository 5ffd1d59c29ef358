import { Type, type Static } from '@sinclair/typebox';
import { NullableInteger } from '../nullable-integer.ts';
import { ModelSignatureSchema } from '../signature.ts';
import { StringEnum } from '../string-enum.ts';
import { EXAMPLE_TIME } from './examples.ts';
import { FiniteInteger } from './request-values.ts';
import { EmbeddingSettingsSchema, POOLINGS } from './embeddings.ts';
import { ModelRetentionSchema } from './retention.ts';

/** `fixed`: batches as uploaded; `auto`: the worker measures its device and picks size and delay within the bounds. */
export const BATCHING_MODES = ['fixed', 'auto'] as const;
export type BatchingMode = (typeof BATCHING_MODES)[number];
/** The p99 queue wait an `auto` model keeps under when the upload names none. */
export const DEFAULT_LATENCY_TARGET_MS = 100;

export const BatchingSchema = Type.Object({
  maxBatchSize: Type.Integer({
    minimum: 1,
    maximum: 4096,
    description: 'fixed: the most jobs in one batch; auto: the largest batch size the worker may choose',
  }),
  maxBatchDelayMs: Type.Integer({
    minimum: 0,
    maximum: 60_000,
    description: 'fixed: how long a batch waits to fill; auto: the longest delay the worker may choose',
  }),
  mode: StringEnum(BATCHING_MODES, {
    description:
      '`auto`: the worker measures inference time per batch size on its device and picks the size and delay ' +
      'with the best throughput whose p99 queue wait stays under `latencyTargetMs`. Non-batchable models are always `fixed`',
  }),
  latencyTargetMs: NullableInteger({ minimum: 1, description: 'auto only (default 100): the p99 queue wait in ms the worker keeps under; null in fixed mode' }),
});
export type Batching = Static<typeof BatchingSchema>;

/** One version's share of a model's unversioned traffic: it takes weight / (sum of weights). */
export const ModelRouteSchema = Type.Object({
  version: Type.Integer(),
  weight: Type.Integer({ description: 'Relative weight; 0 keeps the version in the table but sends it nothing' }),
});
export type ModelRoute = Static<typeof ModelRouteSchema>;

/** A canary: version 2 of the demo mlp takes a tenth of the jobs that name no version. */
const exampleRoutes = [
  { version: 1, weight: 90 },
  { version: 2, weight: 10 },
];
/** The demo mlp: features FP32 [N, 64] → logits FP32 [N, 16]. */
const exampleModel = {
  name: 'mlp',
  version: 2,
  sha256: '7db1bc876b3f27394cdf5d3b44f8982c0ca724156528b275fd836abc89c7cb5e',
  sizeBytes: 346683,
  signature: {
    inputs: [{ name: 'features', datatype: 'FP32', shape: [-1, 64] }],
    outputs: [{ name: 'logits', datatype: 'FP32', shape: [-1, 16] }],
    batchable: true,
  },
  batching: { maxBatchSize: 32, maxBatchDelayMs: 5, mode: 'auto', latencyTargetMs: 50 },
  responseCache: false,
  createdAt: '2025-06-01T08:15:00.000Z',
  routing: exampleRoutes,
  retention: { retentionS: null, effectiveS: 604_800, source: 'default', inputRetentionS: 0 },
};

export const ModelSchema = Type.Object(
  {
    name: Type.String(),
    version: Type.Integer(),
    sha256: Type.String(),
    sizeBytes: Type.Integer(),
    signature: ModelSignatureSchema,
    batching: BatchingSchema,
    responseCache: Type.Boolean({
      description: 'Jobs with the same input tensors as an earlier succeeded job of this version get its result without running the model',
    }),
    embedding: Type.Optional(
      Type.Object(EmbeddingSettingsSchema.properties, { description: 'Present on encoder models registered with a tokenizer: they serve POST /v1/embeddings' }),
    ),
    createdAt: Type.String({ format: 'date-time' }),
    retiredAt: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'Present once the version is retired (DELETE /v1/models/:name): it takes no new jobs; jobs already queued or running finish',
      }),
    ),
    routing: Type.Optional(
      Type.Array(ModelRouteSchema, {
        description: "The model's routing table (GET /v1/models/:name/routing); empty when unversioned jobs go to the latest version",
      }),
    ),
    retention: Type.Optional(
      Type.Object(ModelRetentionSchema.properties, {
        description: "How long the name's finished jobs are kept (PATCH /v1/models/:name sets it); on the model reads and lists, not the upload",
      }),
    ),
  },
  { $id: 'Model', examples: [exampleModel] },
);
export type Model = Static<typeof ModelSchema>;

export const ModelListSchema = Type.Object({ items: Type.Array(ModelSchema) }, { examples: [{ items: [exampleModel] }] });
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
    batching: Type.Optional(
      StringEnum(BATCHING_MODES, {
        description: '`auto`: the worker picks batch size and delay per device, bounded by maxBatchSize and maxBatchDelayMs (default `fixed`)',
      }),
    ),
    latencyTargetMs: Type.Optional(
      FiniteInteger({
        minimum: 1,
        maximum: 600_000,
        description: `With batching=auto: the p99 queue wait in ms to keep under (default ${DEFAULT_LATENCY_TARGET_MS})`,
      }),
    ),
    responseCache: Type.Optional(
      Type.Boolean({
        default: false,
        description: "Answer jobs whose inputs equal an earlier succeeded job's with its stored result (deterministic models only)",
      }),
    ),
    // With a `tokenizer` file part (tokenizer.json): the model serves POST /v1/embeddings.
    pooling: Type.Optional(StringEnum(POOLINGS, { description: 'Embedding models: default `mean` for a [batch, seq, dim] output, `none` for [batch, dim]' })),
    normalize: Type.Optional(Type.Boolean({ description: 'Embedding models: scale to unit length (default true)' })),
    embeddingOutput: Type.Optional(
      Type.String({ maxLength: 256, description: 'Embedding models: the output to read (default `last_hidden_state` when present, else the first)' }),
    ),
    maxTokens: Type.Optional(
      FiniteInteger({
        minimum: 1,
        maximum: 1_000_000,
        description:
          "Embedding models: the longest text in tokens (default: the tokenizer's truncation length, else the model's fixed sequence length, else 512)",
      }),
    ),
  },
  { additionalProperties: false },
);
export type ModelUploadFields = Static<typeof ModelUploadFieldsSchema>;

/** `:name` of the routing routes: a model name, never a version. */
export const ModelRoutingParamsSchema = Type.Object({ name: Type.String({ pattern: MODEL_NAME_PATTERN.source }) });

export const ModelRouteInputSchema = Type.Object(
  {
    version: FiniteInteger({ minimum: 1, maximum: 999_999_999 }),
    weight: FiniteInteger({ minimum: 0, maximum: 1_000_000, description: 'Relative weight; 0 keeps the version in the table but sends it nothing' }),
  },
  { additionalProperties: false },
);

/** PUT /v1/models/:name/routing: the whole new table. An empty list removes routing (jobs go to the latest version). */
export const ModelRoutingBodySchema = Type.Object(
  {
    versions: Type.Array(ModelRouteInputSchema, {
      maxItems: 32,
      description: 'Distinct registered versions, weights summing to more than 0; [] for no routing',
    }),
  },
  { additionalProperties: false, examples: [{ versions: exampleRoutes }] },
);
export type ModelRoutingBody = Static<typeof ModelRoutingBodySchema>;

export const ModelRoutingSchema = Type.Object(
  {
    name: Type.String(),
    versions: Type.Array(ModelRouteSchema, { description: 'By version; empty when there is no routing' }),
    updatedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the table was last set; null when it is empty' }),
  },
  { examples: [{ name: 'mlp', versions: exampleRoutes, updatedAt: EXAMPLE_TIME }] },
);
export type ModelRouting = Static<typeof ModelRoutingSchema>;

/** DELETE /v1/models/:name: what to do when a routing table sends traffic to a version being retired. */
export const RetireModelQuerySchema = Type.Object(
  {
    reroute: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'true: remove the retired versions from the routing table (the other weights stay as they are, so their shares grow in proportion; ' +
          'with none above 0 left, routing is removed and the latest version that is not retired serves); ' +
          'false: answer 409 MODEL_VERSION_ROUTED while the table gives the version a weight above 0',
      }),
    ),
  },
  { additionalProperties: false },
);
export type RetireModelQuery = Static<typeof RetireModelQuerySchema>;

export const RetiredVersionSchema = Type.Object({
  version: Type.Integer(),
  retiredAt: Type.String({ format: 'date-time' }),
  unfinishedJobs: Type.Integer({
    description: "Jobs of the version still queued or running: they finish, and the version's artifact is kept until there are none",
  }),
});

/** The answer to DELETE /v1/models/:name: the versions the call names, all retired now, and the routing table after it. */
export const ModelRetirementSchema = Type.Object(
  {
    name: Type.String(),
    versions: Type.Array(RetiredVersionSchema, { description: 'The versions the request named (one, or every version), newest first' }),
    routing: Type.Array(ModelRouteSchema, { description: "The model's routing table after the call; empty when there is no routing" }),
  },
  {
    examples: [{ name: 'mlp', versions: [{ version: 1, retiredAt: EXAMPLE_TIME, unfinishedJobs: 12 }], routing: [{ version: 2, weight: 10 }] }],
  },
);
export type ModelRetirement = Static<typeof ModelRetirementSchema>;
