import { Type } from '@sinclair/typebox';
import { ConfigError, dbConfig, logConfig, redisConfig, s3Config, tracingConfig } from '@inferq/core';

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
  /**
   * Days after which the bucket's lifecycle rule expires a job's objects (`jobs/` prefix), set by the API at start:
   * the backstop for objects the service's own deletes missed; keep it above the longest job retention. 0: no rule.
   */
  S3_JOB_OBJECTS_EXPIRE_DAYS: Type.Integer({ default: 30, minimum: 0, maximum: 36_500 }),
  /** Tensors up to this size are kept inline in the job row; larger ones go to S3. */
  INLINE_TENSOR_MAX_BYTES: Type.Integer({ default: 64 * 1024, minimum: 0 }),
  /**
   * How an inline tensor is written: `bytes` (raw, in the row's bytea) or `base64` (text in its jsonb, as releases before
   * migration 0022 wrote and read it). Both are always read; set `base64` on every API and worker only while a fleet rolls
   * from such a release, then unset it (docs/deploy.md).
   */
  INLINE_TENSOR_FORM: Type.Union([Type.Literal('bytes'), Type.Literal('base64')], { default: 'bytes' }),
  /**
   * Inline-sized inputs of a submit group are written as one S3 object (a segment; the rows name it and an offset), not
   * into the job rows, where each job's bytes cost the WAL ~14 KB over its life. A group whose segment cannot be written
   * keeps its inputs in its rows. Workers of this release read both; turn it on once every worker runs it.
   */
  INPUT_SEGMENTS: Type.Boolean({ default: true }),
  /** Most submissions written in one group commit (one INSERT and one queue round trip). */
  SUBMIT_GROUP_MAX: Type.Integer({ default: 256, minimum: 1, maximum: 10_000 }),
  /**
   * The longest a submit's queue write is waited for once sent (a Cluster shard failing over holds its slot's commands):
   * then the job, recorded in Postgres, is accepted (202) and the reconciler queues it if the write did not land.
   */
  SUBMIT_QUEUE_TIMEOUT_MS: Type.Integer({ default: 3_000, minimum: 100, maximum: 60_000 }),
  /** Jobs waiting in one model's queue above which submissions are refused with 429 QUEUE_FULL (backpressure); 0: no limit. */
  QUEUE_MAX_DEPTH: Type.Integer({ default: 1_000_000, minimum: 0 }),
  /**
   * Redis memory a model's queue may spend carrying its waiting jobs' inputs, in MiB: a job whose inputs' bytes the
   * request brought (inline ones, and those kept in S3) carries them beside its queue entry while the model's backlog,
   * each job carrying as much, stays within it, and the worker then reads no input from Postgres or S3 (which keep them,
   * the record). 0: never carried.
   */
  QUEUE_CARRIED_INPUTS_MB: Type.Integer({ default: 64, minimum: 0, maximum: 1_048_576 }),
  /**
   * Jobs one queue entry may carry: the jobs of one commit group (or a bulk batch's slice) with the same model, priority
   * class and key share an entry, which a worker splits, so BullMQ's per-entry cost (fetch, lock, acknowledgement,
   * events) is paid once for them. 1: every job an entry of its own.
   */
  QUEUE_GROUP_MAX: Type.Integer({ default: 32, minimum: 1, maximum: 256 }),
  /** The longest `Prefer: wait=N` a submit is held for, in seconds. */
  WAIT_MAX_S: Type.Integer({ default: 60, minimum: 0, maximum: 600 }),
  /**
   * How long a poll (GET /v1/jobs/:id) may answer from this process's memory: a finished job's view for this long (a purge or
   * delete through another API process shows within it), an unfinished one's until the queue reports an event for it, and
   * at most this long. 0: every poll reads Postgres.
   */
  JOB_VIEW_CACHE_MS: Type.Integer({ default: 1_000, minimum: 0, maximum: 60_000 }),
  /** The largest file POST /v1/files takes (a batch's JSONL, streamed to object storage; never held in memory). */
  BATCH_FILE_MAX_BYTES: Type.Integer({ default: 2 * 1024 * 1024 * 1024, minimum: 1024 }),
  /**
   * How long an uploaded batch file is kept when its upload names no `expires_after` (OpenAI's default: 30 days); 0:
   * until deleted. A file a batch still reads waits for the batch to end.
   */
  BATCH_FILE_EXPIRES_S: Type.Integer({ default: 2_592_000, minimum: 0, maximum: 2_592_000 }),
  /** How often one API replica (a lease in Redis) deletes expired batch files, their rows and their objects. */
  FILE_SWEEP_INTERVAL_MS: Type.Integer({ default: 60_000, minimum: 1_000, maximum: 86_400_000 }),
  /** Most requests (lines) in one batch's file. */
  BATCH_MAX_LINES: Type.Integer({ default: 5_000_000, minimum: 1 }),
  /** Jobs of one batch queued or running at once: the batch submits more as they finish (its backpressure on the queue). */
  BATCH_JOBS_IN_FLIGHT: Type.Integer({ default: 10_000, minimum: 1 }),
  /** Batches this API process advances at once (validating, submitting, watching, writing their files); 0: none here. */
  BATCH_RUNNERS: Type.Integer({ default: 2, minimum: 0, maximum: 64 }),
  /** How long a batch stays with the API process advancing it without word from it: a process that dies leaves its batches to another after this. */
  BATCH_LEASE_MS: Type.Integer({ default: 30_000, minimum: 1_000, maximum: 600_000 }),
  /** How often queued jobs past their deadline are expired. */
  DEADLINE_SWEEP_INTERVAL_MS: Type.Integer({ default: 1_000, minimum: 50 }),
  /** How often the artifacts of retired model versions that no unfinished job needs are deleted from object storage. */
  RETIRED_ARTIFACT_SWEEP_INTERVAL_MS: Type.Integer({ default: 30_000, minimum: 50 }),
  /**
   * How long a retired version's artifact is kept at least, even with no job left: a replica that cached the version
   * before the retirement (CACHE_TTL_MS) may still accept a job for it meanwhile. Keep it above CACHE_TTL_MS.
   */
  RETIRED_ARTIFACT_GRACE_MS: Type.Integer({ default: 60_000, minimum: 0 }),
  /** Seconds a finished job is kept before it is purged to a tombstone, unless its model's or its key's retention says otherwise (model first). */
  JOB_RETENTION_S: Type.Integer({ default: 7 * 24 * 3600, minimum: 60, maximum: 2_000_000_000 }),
  /**
   * Seconds a succeeded job's input tensors are kept, unless it was submitted with `keepInputs` (then they live as
   * long as the job); 0: dropped at the next sweep. Failed, canceled and expired jobs keep theirs (for a retry).
   */
  JOB_INPUT_RETENTION_S: Type.Integer({ default: 0, minimum: 0, maximum: 2_000_000_000 }),
  /** How often one API replica (a lease in Redis) purges expired jobs and drops expired inputs. */
  RETENTION_SWEEP_INTERVAL_MS: Type.Integer({ default: 60_000, minimum: 1_000, maximum: 86_400_000 }),
  /**
   * How often one API replica (a lease in Redis) deletes orphaned job objects: objects under `jobs/<day>/` of days older than
   * JOB_RETENTION_S plus a day that no row names (outputs of a fenced-out attempt, inputs of a failed submit, a purge's failed delete).
   */
  ORPHAN_SWEEP_INTERVAL_MS: Type.Integer({ default: 3_600_000, minimum: 1_000, maximum: 86_400_000 }),
  /** Objects one orphan sweep lists (and so at most deletes); the next sweep goes on where it stopped. */
  ORPHAN_SWEEP_MAX_OBJECTS: Type.Integer({ default: 10_000, minimum: 1, maximum: 10_000_000 }),
  /**
   * Days past today (UTC) whose daily partitions of jobs the API keeps created (at start, then hourly on one replica):
   * a job can only be inserted into an existing partition, so this is how long the API may be down before submits fail.
   */
  JOB_PARTITIONS_AHEAD_DAYS: Type.Integer({ default: 7, minimum: 1, maximum: 366 }),
  /**
   * Seconds a day's jobs (tombstones by then) are kept before the API drops that day's whole partition of jobs (hourly, on one
   * replica): after it a GET of such a job answers 404 JOB_NOT_FOUND and the usage of those days is gone. jobs_legacy is dropped by hand.
   */
  JOB_TOMBSTONE_RETENTION_S: Type.Integer({ default: 400 * 86_400, minimum: 86_400, maximum: 2_000_000_000 }),
  /** Seconds an audit_log entry is kept; older ones are deleted hourly, on one replica, in bounded chunks. */
  AUDIT_RETENTION_S: Type.Integer({ default: 400 * 86_400, minimum: 86_400, maximum: 2_000_000_000 }),
  /** Order each priority's jobs fairly between API keys (weighted); false: plain BullMQ priorities, first come first served within each. */
  FAIR_SCHEDULING: Type.Boolean({ default: true }),
  /** Requests per minute per API key, for keys without a limit of their own (429 RATE_LIMITED past it); 0: no default limit. */
  RATE_LIMIT_PER_MIN: Type.Integer({ default: 6_000, minimum: 0 }),
  OUTPUT_URL_TTL_S: Type.Integer({ default: 300, minimum: 10, maximum: 86_400 }),
  /**
   * How long an upload (POST /v1/uploads) lasts: its presigned PUT URL, and the upload until a job uses it. At most a day,
   * the bucket's expiry rule on `uploads/` (the backstop for objects the upload sweep missed).
   */
  UPLOAD_TTL_S: Type.Integer({ default: 3_600, minimum: 60, maximum: 86_400 }),
  /** How often one API replica (a lease in Redis) deletes expired uploads, their rows and the objects of those no job used. */
  UPLOAD_SWEEP_INTERVAL_MS: Type.Integer({ default: 60_000, minimum: 1_000, maximum: 86_400_000 }),
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

/** Checks across settings that one schema field cannot express; throws ConfigError like loadConfig. */
export function checkApiConfig<C extends { JOB_RETENTION_S: number; S3_JOB_OBJECTS_EXPIRE_DAYS: number; JOB_TOMBSTONE_RETENTION_S: number }>(config: C): C {
  const problems: string[] = [];
  const expiryS = config.S3_JOB_OBJECTS_EXPIRE_DAYS * 86_400;
  if (expiryS > 0 && config.JOB_RETENTION_S > expiryS) {
    problems.push(
      `JOB_RETENTION_S (${config.JOB_RETENTION_S} s) is longer than S3_JOB_OBJECTS_EXPIRE_DAYS (${config.S3_JOB_OBJECTS_EXPIRE_DAYS} days): ` +
        "the bucket's expiry rule would delete jobs' objects before the jobs are purged; raise S3_JOB_OBJECTS_EXPIRE_DAYS or lower JOB_RETENTION_S",
    );
  }
  if (config.JOB_RETENTION_S > config.JOB_TOMBSTONE_RETENTION_S) {
    problems.push(
      `JOB_RETENTION_S (${config.JOB_RETENTION_S} s) is longer than JOB_TOMBSTONE_RETENTION_S (${config.JOB_TOMBSTONE_RETENTION_S} s): ` +
        "a day's partition would be dropped before its jobs are purged",
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
