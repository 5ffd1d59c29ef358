import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../string-enum.ts';
import { EXAMPLE_KEY_ID } from './examples.ts';
import { NullableInteger } from '../nullable-integer.ts';
import { FiniteInteger, StorableText } from './request-values.ts';

export const Scope = {
  JobsRead: 'jobs:read',
  JobsWrite: 'jobs:write',
  ModelsWrite: 'models:write',
  Admin: 'admin',
} as const;
export type Scope = (typeof Scope)[keyof typeof Scope];
export const SCOPES = Object.values(Scope);
export const ScopeSchema = StringEnum(SCOPES);

/** Bounds of a key's weight; the migration's CHECK says the same. */
export const KEY_WEIGHT_MIN = 1;
export const KEY_WEIGHT_MAX = 1000;
export const DEFAULT_KEY_WEIGHT = 1;
const WEIGHT_DESCRIPTION =
  "Share of each model's queue this key gets against other keys at the same priority when both have " +
  'work waiting: a key with weight 2 is served twice as many jobs as a key with weight 1';

/** Bounds of a retention override (seconds a finished job is kept); the migration checks the minimum too. */
export const RETENTION_S_MIN = 60;
export const RETENTION_S_MAX = 2_000_000_000;
/** A retention override in a body or a view: seconds, or null for the server's default. */
export const RetentionSecondsSchema = (description: string) => NullableInteger({ minimum: RETENTION_S_MIN, maximum: RETENTION_S_MAX, description });
/**
 * The same in a request body. `const: null` rather than a `null` type: the API's Ajv coerces bodies like
 * query strings, and would read `""` as null for a `null` type, clearing the override; and null first, as an
 * integer branch tried first would coerce null to 0 in place.
 */
export const RetentionSecondsInput = (description: string) =>
  Type.Union([Type.Unsafe<null>({ const: null }), FiniteInteger({ minimum: RETENTION_S_MIN, maximum: RETENTION_S_MAX })], { description });
const KEY_RETENTION_DESCRIPTION =
  "Seconds a finished job of this key is kept before it is purged to a tombstone; null: the server's JOB_RETENTION_S. " +
  "A model's own retention (PATCH /v1/models/:name) wins over it";

export const CreateKeyBodySchema = Type.Object(
  {
    name: StorableText({ minLength: 1, maxLength: 100 }),
    scopes: Type.Optional(Type.Array(ScopeSchema, { uniqueItems: true, default: ['jobs:read', 'jobs:write'] })),
    rateLimitPerMin: Type.Optional(
      FiniteInteger({
        minimum: 1,
        maximum: 10_000_000,
        description: "Requests per minute this key may make; omitted: the server's default (RATE_LIMIT_PER_MIN)",
      }),
    ),
    weight: Type.Optional(FiniteInteger({ minimum: KEY_WEIGHT_MIN, maximum: KEY_WEIGHT_MAX, default: DEFAULT_KEY_WEIGHT, description: WEIGHT_DESCRIPTION })),
  },
  { additionalProperties: false, examples: [{ name: 'search-team', scopes: ['jobs:read', 'jobs:write'], rateLimitPerMin: 600, weight: 2 }] },
);

const exampleKey = {
  id: EXAMPLE_KEY_ID,
  name: 'search-team',
  prefix: 'Xk4pQ2mN8rTa',
  scopes: ['jobs:read', 'jobs:write'],
  rateLimitPerMin: 600,
  weight: 2,
  retentionS: null,
  createdAt: '2025-06-01T08:00:00.000Z',
  revokedAt: null,
};
export type CreateKeyBody = Static<typeof CreateKeyBodySchema>;

export const ApiKeySchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    prefix: Type.String({ description: 'The visible start of the key' }),
    scopes: Type.Array(ScopeSchema),
    rateLimitPerMin: Type.Union([Type.Integer(), Type.Null()], { description: "Requests per minute; null: the server's default" }),
    weight: Type.Integer({ minimum: KEY_WEIGHT_MIN, maximum: KEY_WEIGHT_MAX, description: WEIGHT_DESCRIPTION }),
    retentionS: Type.Optional(RetentionSecondsSchema(KEY_RETENTION_DESCRIPTION)),
    createdAt: Type.String({ format: 'date-time' }),
    revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { examples: [exampleKey] },
);
export type ApiKey = Static<typeof ApiKeySchema>;

export const CreatedKeySchema = Type.Composite([ApiKeySchema, Type.Object({ secret: Type.String({ description: 'Shown once' }) })], {
  examples: [{ ...exampleKey, secret: 'iq_Xk4pQ2mN8rTa_f3Jq9LwZ2bVn7RcY5tHd1KmP8sXe4GuA' }],
});

/** `PATCH /v1/keys/:id` (admin): the settings to change; fields left out stay as they are. */
export const UpdateKeyBodySchema = Type.Object(
  { retentionS: Type.Optional(RetentionSecondsInput(`${KEY_RETENTION_DESCRIPTION}; null clears it`)) },
  { additionalProperties: false, minProperties: 1, examples: [{ retentionS: 86_400 }] },
);
export type UpdateKeyBody = Static<typeof UpdateKeyBodySchema>;

/** `GET /v1/me`: who the caller's key is, so a client can show what it may do. */
export const PrincipalSchema = Type.Object(
  {
    keyId: Type.String({ format: 'uuid' }),
    scopes: Type.Array(ScopeSchema),
    admin: Type.Boolean(),
    weight: Type.Integer({ minimum: KEY_WEIGHT_MIN, maximum: KEY_WEIGHT_MAX, description: WEIGHT_DESCRIPTION }),
  },
  { examples: [{ keyId: EXAMPLE_KEY_ID, scopes: ['jobs:read', 'jobs:write'], admin: false, weight: 2 }] },
);
export type Principal = Static<typeof PrincipalSchema>;
