import { Type, type Static, type TObject } from '@sinclair/typebox';
import { dbConfig, logConfig, processHeapConfig, redisConfig, s3Config, tracingConfig } from '@inferq/core';

export const workerConfig = {
  ...dbConfig,
  ...redisConfig,
  ...s3Config,
  ...logConfig,
  ...tracingConfig,
  ...processHeapConfig,
  /** Devices the launcher starts one process for each: `cpu`, `cuda:0`, `webgpu:0`, comma-separated. */
  WORKER_DEVICES: Type.String({ default: 'cpu', pattern: '^(cpu|cuda:\\d+|webgpu:\\d+)(,(cpu|cuda:\\d+|webgpu:\\d+))*$' }),
  /** The device of this process (set by the launcher). */
  WORKER_DEVICE: Type.String({ default: 'cpu', pattern: '^(cpu|cuda:\\d+|webgpu:\\d+)$' }),
  /** Model names this worker serves, comma-separated, or `*` for every registered model. */
  WORKER_MODELS: Type.String({ default: '*' }),
  /** Execution providers to try in order, overriding the device's default order (e.g. `cuda,cpu`). */
  EXECUTION_PROVIDERS: Type.Optional(Type.String({ pattern: '^[a-z]+(,[a-z]+)*$' })),
  /**
   * A CUDA (or TensorRT) provider library of another onnxruntime release than onnxruntime-node's core: `same-release`
   * refuses it (the next provider is tried), `any` runs it; either way the model's load log says which pair it is.
   */
  CUDA_PROVIDER_PAIRING: Type.Union([Type.Literal('same-release'), Type.Literal('any')], { default: 'same-release' }),
  MODEL_CACHE_DIR: Type.String({ default: '.inferq/model-cache' }),
  /** onnxruntime intra-op threads per session; 0 lets onnxruntime choose. */
  INTRA_OP_THREADS: Type.Integer({ default: 0, minimum: 0, maximum: 256 }),
  INTER_OP_THREADS: Type.Integer({ default: 0, minimum: 0, maximum: 256 }),
  /** Run each model once on zero-filled inputs right after it loads, so the first real batch does not pay onnxruntime's first-run cost. */
  MODEL_WARMUP: Type.Boolean({ default: true }),
  /** Unload a model no batch has used for this long; 0: never. */
  MODEL_IDLE_UNLOAD_S: Type.Integer({ default: 0, minimum: 0 }),
  /**
   * Estimated memory (artifact bytes × 2, see session-budget.ts) the loaded models may hold; least
   * recently used idle ones are unloaded to stay under it. 0: no limit.
   */
  MODEL_MEMORY_BUDGET_MB: Type.Integer({ default: 0, minimum: 0 }),
  /** Models loaded and warmed at start, before the worker takes jobs: `name` (latest version) or `name:version`, comma-separated. */
  WORKER_PRELOAD_MODELS: Type.String({ default: '', pattern: '^([a-z0-9][a-z0-9._-]{0,62}(:[1-9][0-9]*)?(,[a-z0-9][a-z0-9._-]{0,62}(:[1-9][0-9]*)?)*)?$' }),
  /**
   * Deadline-aware scheduling: a batch holding a job with a deadline is closed
   * early enough to finish by it (by the model's measured inference time), and
   * a job that would miss it anyway is expired before it runs. false: deadlines
   * only expire jobs still queued.
   */
  DEADLINE_SCHEDULING: Type.Boolean({ default: true }),
  /**
   * Priority aging: a normal or low job moves up one priority class for every
   * this many seconds it has waited, so no stream of more urgent work starves
   * it. 0: off (strict priorities).
   */
  PRIORITY_AGING_S: Type.Number({ default: 10, minimum: 0 }),
  /** How long a worker holds a queue job before another may take it over. */
  WORKER_LOCK_DURATION_MS: Type.Integer({ default: 30_000, minimum: 1_000 }),
  /**
   * Batches of one model in flight at once: one runs on the session while the others are claimed (Postgres) or have
   * their results written. Two keep a CPU session busy; a fast GPU whose batch runs in less than a claim and a result
   * write together wants more. `auto`: as many as the measured batches want, their whole way over their device time
   * (2 to 16; a GPU worker's setting); a number holds it there (the bench's drain sweeps it: BENCH_BATCHES_IN_FLIGHT).
   */
  WORKER_BATCHES_IN_FLIGHT: Type.Union([Type.Integer({ minimum: 1, maximum: 16 }), Type.Literal('auto')], { default: 2 }),
  /**
   * Feeder threads per worker process: each runs its own queue consumers, Postgres pool and Redis connections (the
   * per-job path: claim, inputs, result writes, acknowledgements) and feeds the device's one copy of each model, which
   * the process's main thread keeps with the heartbeat, metrics and periodic duties. 1 runs that path on the main
   * thread, no feeder thread; more when one event loop cannot keep a fast device busy (docs/deploy.md, Capacity).
   */
  WORKER_FEEDERS: Type.Integer({ default: 1, minimum: 1, maximum: 16 }),
  /**
   * A batch still running this long after its claim writes the claim to
   * Postgres, so clients see its jobs `running`; a quicker batch writes only
   * its outcome (its jobs go from queued to their end). 0 writes every claim.
   */
  WORKER_RUNNING_MARK_MS: Type.Integer({ default: 250, minimum: 0, maximum: 60_000 }),
  WORKER_STALLED_INTERVAL_MS: Type.Integer({ default: 30_000, minimum: 500 }),
  MODEL_REFRESH_INTERVAL_MS: Type.Integer({ default: 5_000, minimum: 100 }),
  RECONCILE_INTERVAL_MS: Type.Integer({ default: 10_000, minimum: 100 }),
  /** Only jobs at least this old are re-enqueued, so the API's insert→enqueue is never raced. */
  RECONCILE_MIN_AGE_MS: Type.Integer({ default: 10_000, minimum: 0 }),
  HEARTBEAT_INTERVAL_MS: Type.Integer({ default: 5_000, minimum: 100 }),
  /** Outputs up to this size are stored inline in Postgres; larger ones go to S3. */
  INLINE_TENSOR_MAX_BYTES: Type.Integer({ default: 64 * 1024, minimum: 0 }),
  /**
   * How an inline tensor is written: `bytes` (raw, in the row's bytea) or `base64` (text in its jsonb, as releases before
   * migration 0022 wrote and read it). Both are always read; set `base64` on every API and worker only while a fleet rolls
   * from such a release, then unset it (docs/deploy.md).
   */
  INLINE_TENSOR_FORM: Type.Union([Type.Literal('bytes'), Type.Literal('base64')], { default: 'bytes' }),
  JOB_ATTEMPTS: Type.Integer({ default: 3, minimum: 1, maximum: 100 }),
  RETRY_BACKOFF_MS: Type.Integer({ default: 500, minimum: 0 }),
  /** Where GET /metrics (Prometheus) is served; port 0 takes any free one. */
  METRICS_HOST: Type.String({ default: '0.0.0.0' }),
  METRICS_PORT: Type.Integer({ default: 9464, minimum: 0, maximum: 65535 }),
  /** Time a stopping worker gives its current batch before it exits anyway. */
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ default: 30_000, minimum: 0 }),
};

/** The loaded settings: what startWorkerProcess and each feeder thread (as workerData) run on. */
export type WorkerConfig = Readonly<Static<TObject<typeof workerConfig>>>;
