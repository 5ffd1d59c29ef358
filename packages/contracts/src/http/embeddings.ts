import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../string-enum.ts';
import { RoutingKeyHeaderSchema } from './jobs.ts';
import { ProblemSchema } from './problem.ts';
import { FiniteInteger, StorableText } from './request-values.ts';

// OpenAI-compatible embeddings (POST /v1/embeddings) for encoder models
// registered with a tokenizer, and the embedding settings such a model keeps.

export const POOLINGS = ['mean', 'cls', 'none'] as const;
export type Pooling = (typeof POOLINGS)[number];

export const EmbeddingSettingsSchema = Type.Object({
  pooling: StringEnum(POOLINGS, {
    description:
      "`mean`: the average of the output over the real (unpadded) tokens; `cls`: the first token's; `none`: " +
      'the output is already one vector per text ([batch, dim])',
  }),
  normalize: Type.Boolean({ description: 'Scaled to unit L2 length' }),
  output: Type.String({ description: 'The model output the embedding is read from' }),
  maxTokens: Type.Integer({ description: 'Longest tokenised text (special tokens included) the model takes; longer ones are refused with INPUT_TOO_LONG' }),
  tokenizerSha256: Type.String({ description: 'sha256 of the tokenizer.json uploaded with the model' }),
});
export type EmbeddingSettings = Static<typeof EmbeddingSettingsSchema>;

/** Most texts in one request (OpenAI's limit too). */
export const EMBEDDING_INPUTS_MAX = 2048;
const Text = StorableText({ maxLength: 100_000 });
const TokenIds = Type.Array(FiniteInteger({ minimum: 0, maximum: 2 ** 31 - 1 }), { minItems: 1, maxItems: 8192 });

export const EmbeddingsBodySchema = Type.Object(
  {
    model: Type.String({
      maxLength: 80,
      description: '`name` (routed like a job: the routing table or the latest version; every text of the request goes to the same version) or `name:version`',
    }),
    input: Type.Union(
      [
        Text,
        Type.Array(Text, { minItems: 1, maxItems: EMBEDDING_INPUTS_MAX }),
        TokenIds,
        Type.Array(TokenIds, { minItems: 1, maxItems: EMBEDDING_INPUTS_MAX }),
      ],
      { description: "A text, an array of texts, an array of token ids, or an array of token-id arrays. Each text is one job on the model's queue." },
    ),
    encoding_format: Type.Optional(
      StringEnum(['float', 'base64'], { description: '`base64`: each embedding as the base64 of its little-endian float32 values' }),
    ),
    dimensions: Type.Optional(
      FiniteInteger({
        minimum: 1,
        maximum: 65_536,
        description: 'Keep the first N values (renormalised when the model normalises): for Matryoshka-trained models',
      }),
    ),
    user: Type.Optional(Type.String({ maxLength: 256, description: 'Accepted for compatibility; not used' })),
  },
  { additionalProperties: false, examples: [{ model: 'transformer', input: ['the quick brown fox', 'hello world'], dimensions: 4 }] },
);
export type EmbeddingsBody = Static<typeof EmbeddingsBodySchema>;

export const EmbeddingsResponseSchema = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(
      Type.Object({
        object: Type.Literal('embedding'),
        index: Type.Integer(),
        embedding: Type.Union([Type.Array(Type.Number()), Type.String()]),
      }),
    ),
    model: Type.String({ description: 'The exact version that served every text: `name:version`' }),
    usage: Type.Object({ prompt_tokens: Type.Integer(), total_tokens: Type.Integer() }),
  },
  {
    // The answer to the body's example, which asks for 4 dimensions.
    examples: [
      {
        object: 'list',
        data: [
          { object: 'embedding', index: 0, embedding: [0.512, -0.371, 0.694, 0.348] },
          { object: 'embedding', index: 1, embedding: [-0.208, 0.655, 0.402, -0.603] },
        ],
        model: 'transformer:1',
        usage: { prompt_tokens: 10, total_tokens: 10 },
      },
    ],
  },
);
export type EmbeddingsResponse = Static<typeof EmbeddingsResponseSchema>;

export const EmbeddingsHeadersSchema = Type.Object({ 'x-routing-key': Type.Optional(RoutingKeyHeaderSchema) });

/** Problem details plus OpenAI's `error` object, so OpenAI clients and RFC 9457 clients both read it. */
export const OpenAiProblemSchema = Type.Object(
  {
    ...ProblemSchema.properties,
    error: Type.Object(
      { message: Type.String(), type: Type.String(), code: Type.String(), param: Type.Null() },
      { description: "OpenAI's error object; `code` is the problem's" },
    ),
  },
  { description: "RFC 9457 problem details with OpenAI's `error` object" },
);
