import { Type } from '@sinclair/typebox';
import { dbConfig, logConfig, redisConfig, s3Config } from '@inferq/core';

export const apiConfig = {
  ...dbConfig,
  ...redisConfig,
  ...s3Config,
  ...logConfig,
  HOST: Type.String({ default: '127.0.0.1' }),
  PORT: Type.Integer({ default: 8080, minimum: 0, maximum: 65535 }),
  /** Bootstrap admin key (`iq_<12 chars>_<secret>`), upserted at start. */
  ADMIN_API_KEY: Type.Optional(Type.String({ pattern: '^iq_[A-Za-z0-9]{12}_[A-Za-z0-9]{16,128}$' })),
  BODY_LIMIT_BYTES: Type.Integer({ default: 32 * 1024 * 1024, minimum: 1024 }),
  MODEL_UPLOAD_LIMIT_BYTES: Type.Integer({ default: 1024 * 1024 * 1024, minimum: 1024 }),
  /** Decoded input bytes per job above which the request is refused. */
  INPUT_MAX_BYTES: Type.Integer({ default: 64 * 1024 * 1024, minimum: 1 }),
  /** Tensors up to this size travel inline in Postgres and Redis; larger ones go to S3. */
  INLINE_TENSOR_MAX_BYTES: Type.Integer({ default: 64 * 1024, minimum: 0 }),
  /** Most submissions written in one group commit (one INSERT and one queue round trip). */
  SUBMIT_GROUP_MAX: Type.Integer({ default: 256, minimum: 1, maximum: 10_000 }),
  OUTPUT_URL_TTL_S: Type.Integer({ default: 300, minimum: 10, maximum: 86_400 }),
  /** How long resolved model versions and verified keys are cached in memory. */
  CACHE_TTL_MS: Type.Integer({ default: 5_000, minimum: 0 }),
  /** The built web console (`npm run build:web`), served at `/`; relative to the working directory. */
  CONSOLE_DIR: Type.String({ default: 'apps/web/dist' }),
};
