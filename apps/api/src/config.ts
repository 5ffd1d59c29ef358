import { Type } from '@sinclair/typebox';
import { dbConfig, logConfig, redisConfig, s3Config, tracingConfig } from '@inferq/core';

export const apiConfig = {
  ...dbConfig,
  ...redisConfig,
  ...s3Config,
  ...logConfig,
  ...tracingConfig,
  HOST: Type.String({ default: '127.0.0.1' }),
  PORT: Type.Integer({ default: 8080, minimum: 0, maximum: 65535 }),
  /** Bootstrap admin key (`iq_<12 chars>_<secret>`), upserted at start. */
  ADMIN_API_KEY: Type.Optional(Type.String({ pattern: '^iq_[A-Za-z0-9]{12}_[A-Za-z0-9]{16,128}$' })),
  BODY_LIMIT_BYTES: Type.Integer({ default: 32 * 1024 * 1024, minimum: 1024 }),
  /** Time a client has to send a request's headers; past it, 408 REQUEST_TIMEOUT and the connection is closed. */
  HTTP_HEADERS_TIMEOUT_MS: Type.Integer({ default: 60_000, minimum: 100, maximum: 3_600_000 }),
  /** Time a client has to send a whole request, body included (0: no limit, as large model uploads may be slow). */
  HTTP_REQUEST_TIMEOUT_MS: Type.Integer({ default: 0, minimum: 0, maximum: 86_400_000 }),
  MODEL_UPLOAD_LIMIT_BYTES: Type.Integer({ default: 1024 * 1024 * 1024, minimum: 1024 }),
  /** Decoded input bytes per job above which the request is refused. */
  INPUT_MAX_BYTES: Type.Integer({ default: 64 * 1024 * 1024, minimum: 1 }),
  /** Tensors up to this size travel inline in Postgres and Redis; larger ones go to S3. */
  INLINE_TENSOR_MAX_BYTES: Type.Integer({ default: 64 * 1024, minimum: 0 }),
  /** Most submissions written in one group commit (one INSERT and one queue round trip). */
  SUBMIT_GROUP_MAX: Type.Integer({ default: 256, minimum: 1, maximum: 10_000 }),
  /** Jobs waiting in one model's queue above which submissions are refused with 429 QUEUE_FULL (backpressure); 0: no limit. */
  QUEUE_MAX_DEPTH: Type.Integer({ default: 1_000_000, minimum: 0 }),
  /** The longest `Prefer: wait=N` a submit is held for, in seconds. */
  WAIT_MAX_S: Type.Integer({ default: 60, minimum: 0, maximum: 600 }),
  /** How often queued jobs past their deadline are expired. */
  DEADLINE_SWEEP_INTERVAL_MS: Type.Integer({ default: 1_000, minimum: 50 }),
  /** Order each priority's jobs fairly between API keys (weighted); false: plain BullMQ priorities, first come first served within each. */
  FAIR_SCHEDULING: Type.Boolean({ default: true }),
  /** Requests per minute per API key, for keys without a limit of their own (429 RATE_LIMITED past it); 0: no default limit. */
  RATE_LIMIT_PER_MIN: Type.Integer({ default: 6_000, minimum: 0 }),
  OUTPUT_URL_TTL_S: Type.Integer({ default: 300, minimum: 10, maximum: 86_400 }),
  /** How long resolved model versions and verified keys are cached in memory. */
  CACHE_TTL_MS: Type.Integer({ default: 5_000, minimum: 0 }),
  /** Server secret each API key's webhook signing key is derived from; unset: a random one per process (development only). */
  WEBHOOK_SIGNING_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  /** Let webhooks reach loopback, private, link-local and other non-public addresses (SSRF guard off: development, tests). */
  WEBHOOK_ALLOW_PRIVATE: Type.Boolean({ default: false }),
  /** Attempts per finished job before its webhook is given up. */
  WEBHOOK_MAX_ATTEMPTS: Type.Integer({ default: 8, minimum: 1, maximum: 20 }),
  /** How often due webhooks are looked for when none were waiting. */
  WEBHOOK_POLL_INTERVAL_MS: Type.Integer({ default: 500, minimum: 10, maximum: 60_000 }),
  /** Time one delivery attempt may take, connection to answer. */
  WEBHOOK_TIMEOUT_MS: Type.Integer({ default: 10_000, minimum: 100, maximum: 60_000 }),
  /** Delay before the second attempt; each later one waits 4x longer (jittered, at most 6 h). */
  WEBHOOK_RETRY_BASE_MS: Type.Integer({ default: 5_000, minimum: 10, maximum: 3_600_000 }),
  /** Delivery attempts in flight at once per API process. */
  WEBHOOK_CONCURRENCY: Type.Integer({ default: 32, minimum: 1, maximum: 1_000 }),
  /** The built web console (`npm run build:web`), served at `/`; relative to the working directory. */
  CONSOLE_DIR: Type.String({ default: 'apps/web/dist' }),
};
