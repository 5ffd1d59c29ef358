import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../string-enum.ts';
import { EXAMPLE_KEY_ID } from './examples.ts';
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
    createdAt: Type.String({ format: 'date-time' }),
    revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { examples: [exampleKey] },
);
export type ApiKey = Static<typeof ApiKeySchema>;

export const CreatedKeySchema = Type.Composite([ApiKeySchema, Type.Object({ secret: Type.String({ description: 'Shown once' }) })], {
  examples: [{ ...exampleKey, secret: 'iq_Xk4pQ2mN8rTa_f3Jq9LwZ2bVn7RcY5tHd1KmP8sXe4GuA' }],
});

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
