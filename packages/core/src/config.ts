import { Type, type Static, type TObject, type TProperties, type TUnsafe } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/** Config fragments: env variable names with units in them, defaults and bounds. */
export const dbConfig = {
  DATABASE_URL: Type.String({
    pattern: '^postgres(ql)?://',
    description:
      'One host: postgres://user:pw@host:5432/db (or a moving endpoint: HAProxy, a -rw Service, an RDS name); several: ' +
      'postgres://user:pw@h1:5432,h2:5432/db?target_session_attrs=read-write, and every pool finds the host that takes writes and moves with it',
  }),
  DATABASE_SCHEMA: Type.String({ default: 'public', pattern: '^[a-z_][a-z0-9_]{0,62}$' }),
  DATABASE_POOL_MAX: Type.Integer({ default: 10, minimum: 1, maximum: 200 }),
  /** How long a statement waits for its answer before its connection is given up: what a primary that vanished without a reset costs. */
  DATABASE_QUERY_TIMEOUT_MS: Type.Integer({ default: 15_000, minimum: 0, description: '0: no limit' }),
};

export const redisConfig = {
  REDIS_URL: Type.String({
    pattern: '^rediss?(\\+(sentinel|cluster))?://',
    description:
      'One node: redis://[user:pw@]host:6379[/db] (rediss:// for TLS); a Sentinel group: redis+sentinel://h1:26379,h2:26379/<group>; ' +
      'a Redis Cluster: redis+cluster://h1:6379,h2:6379 (any of its nodes)',
  }),
  /** The first part of every Redis key; queues are hash-tagged per model (Cluster slots), so the prefix has no braces or colons. */
  QUEUE_PREFIX: Type.String({ default: 'inferq', pattern: '^[^:{}]+$' }),
};

export const s3Config = {
  S3_ENDPOINT: Type.Optional(Type.String({ description: 'Unset for AWS S3' })),
  /** Where clients reach S3, when not at S3_ENDPOINT (compose: MinIO's published port): output download links name it. */
  S3_PUBLIC_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://' })),
  S3_REGION: Type.String({ default: 'us-east-1' }),
  S3_BUCKET: Type.String({ default: 'inferq', minLength: 3 }),
  S3_ACCESS_KEY_ID: Type.Optional(Type.String()),
  S3_SECRET_ACCESS_KEY: Type.Optional(Type.String()),
  S3_FORCE_PATH_STYLE: Type.Boolean({ default: true }),
};

export const logConfig = {
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ) as unknown as TUnsafe<'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'>,
};

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Parses config once from an env-like source (converting strings, applying
 * defaults) and fails listing every bad variable. Only each app's main calls it.
 */
export function loadConfig<P extends TProperties>(properties: P, source: Record<string, string | undefined> = process.env): Readonly<Static<TObject<P>>> {
  const schema = Type.Object(properties);
  const picked: Record<string, unknown> = {};
  for (const key of Object.keys(properties)) {
    const raw = source[key];
    if (raw !== undefined && raw !== '') picked[key] = raw;
  }
  const value = Value.Default(schema, Value.Convert(schema, picked));
  const problems = [...Value.Errors(schema, value)].map(
    (e) => `${e.path.slice(1) || '(root)'}: ${e.message}${e.value === undefined ? '' : ` (got ${JSON.stringify(e.value)})`}`,
  );
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(value as Static<TObject<P>>);
}
