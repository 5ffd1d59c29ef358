import { readFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { createRedisConnection, listServedModels, listWorkerStatuses } from '@inferq/queue';
import { startProcess, type TestProcess } from './processes.ts';
import { createTestContext, type TestContext } from './test-context.ts';
import { demoModel } from './test-env.ts';
import { waitFor } from './wait-for.ts';

/** A port nothing listens on now (the OS picks it). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export const ADMIN_KEY = 'iq_TESTADMIN000_0123456789abcdefghijklmnopqrstuv';

export interface StackOptions {
  /** `info` by default; benchmarks use `warn` so logging costs nothing. */
  logLevel?: string;
  /** Extra API settings. */
  apiEnv?: Record<string, string>;
  /** Extra node flags for the API process (e.g. `--cpu-prof`). */
  apiNodeArgs?: string[];
  /** Service variables in place of the shared servers' (a private server's `env`, for fault tests). */
  services?: Record<string, string>;
  /** Entry points other than the TypeScript sources, e.g. the bundles the images run (`…/dist/worker/launcher.js`). */
  entryPoints?: { api?: string; worker?: string };
  /** How workers run when not as this process does: the Node executable and the flags every worker gets (the bench's, as the images run them). */
  workerRuntime?: { node?: string; nodeArgs?: string[] };
}

export interface Stack {
  ctx: TestContext;
  api: TestProcess;
  baseUrl: string;
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; json: any }>;
  /** Uploads demo model `file` (default: the one called `name`) as `name`. */
  /** Registers demo model `file` as `name` with these text fields; with `tokenizerPath`, as an embedding model. */
  registerModel(name: string, fields?: Record<string, string>, file?: string, tokenizerPath?: string): Promise<void>;
  /** Another API process over the same schema, prefix and bucket (horizontal scale); `env` over the stack's API settings. */
  startApi(env?: Record<string, string>): Promise<{ process: TestProcess; baseUrl: string }>;
  /** `nodeArgs` e.g. `--cpu-prof`; `entry` in place of the stack's worker entry (the bench's timed-device worker). */
  startWorker(env?: Record<string, string>, options?: { nodeArgs?: string[]; entry?: string }): Promise<TestProcess>;
  /**
   * Until a live worker's heartbeat says it serves `model`, as the API's `Prefer: wait` asks: a worker's first
   * heartbeat (all startWorker waits for) may come before it has read the models, most often on a busy machine.
   */
  waitUntilServed(model: string): Promise<void>;
  close(): Promise<void>;
}

/** Fast settings for tests: short locks so a killed worker's jobs come back within seconds. */
export const FAST_WORKER_ENV = {
  WORKER_LOCK_DURATION_MS: '3000',
  WORKER_STALLED_INTERVAL_MS: '1000',
  MODEL_REFRESH_INTERVAL_MS: '200',
  RECONCILE_INTERVAL_MS: '500',
  RECONCILE_MIN_AGE_MS: '1000',
  HEARTBEAT_INTERVAL_MS: '500',
  INTRA_OP_THREADS: '1',
  // Workers of parallel test files must not share a metrics port.
  METRICS_PORT: '0',
};

/**
 * The real API as a process on an ephemeral port, over a fresh schema, prefix
 * and bucket; workers are started on demand. Drives tests that cross processes.
 */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const ctx = await createTestContext({ services: options.services });
  const logLevel = options.logLevel ?? 'info';
  const apis: TestProcess[] = [];
  async function startApi(env: Record<string, string> = {}): Promise<{ process: TestProcess; baseUrl: string }> {
    const port = await freePort();
    // The rate limiter stays on (benchmarks measure its Redis round trip) with a limit load tests never reach. Inputs are
    // kept a day (the server drops them once a job finishes): tests read and retry finished jobs' inputs.
    const api = startProcess(
      options.entryPoints?.api ?? 'apps/api/src/main.ts',
      {
        ...ctx.env,
        PORT: String(port),
        ADMIN_API_KEY: ADMIN_KEY,
        LOG_LEVEL: logLevel,
        RATE_LIMIT_PER_MIN: '100000000',
        JOB_INPUT_RETENTION_S: '86400',
        ...options.apiEnv,
        ...env,
      },
      options.apiNodeArgs,
    );
    apis.push(api);
    const url = `http://127.0.0.1:${port}`;
    await waitFor(async () => (await fetch(`${url}/healthz`)).ok, { timeoutMs: 30_000, intervalMs: 100, what: 'the API to listen' }).catch((err: Error) => {
      throw new Error(`${err.message}; API output:\n${api.output().slice(-2000)}`);
    });
    return { process: api, baseUrl: url };
  }
  const { process: api, baseUrl } = await startApi();
  const workers: TestProcess[] = [];
  const redis = createRedisConnection(ctx.env.REDIS_URL!, 'producer');
  // Fault tests stop Redis under it: a failed call says so, the connection need not.
  redis.on('error', () => {});
  // A Cluster client refuses commands until it has read the slots (no offline queue): a test's first startWorker came too soon once.
  await waitFor(() => redis.status === 'ready', { timeoutMs: 15_000, intervalMs: 20, what: "the stack's Redis connection to be ready" });
  const request: Stack['request'] = async (method, path, body, headers = {}) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, json: await res.json() };
  };
  return {
    ctx,
    api,
    baseUrl,
    request,
    startApi,
    registerModel: (name, fields, file, tokenizerPath) => registerDemoModel(baseUrl, name, fields, file, tokenizerPath),
    async startWorker(env = {}, { nodeArgs = [], entry } = {}) {
      const known = new Set((await listWorkerStatuses(redis, ctx.prefix)).map((s) => s.workerId));
      const w = startProcess(
        entry ?? options.entryPoints?.worker ?? 'apps/worker/src/main.ts',
        { ...ctx.env, ...FAST_WORKER_ENV, MODEL_CACHE_DIR: `.inferq/test-model-cache/${ctx.id}`, LOG_LEVEL: logLevel, ...env },
        [...(options.workerRuntime?.nodeArgs ?? []), ...nodeArgs],
        [],
        { node: options.workerRuntime?.node },
      );
      workers.push(w);
      // Started means beating: a new heartbeat is in the registry (from the launcher's child, when the entry is the launcher).
      await waitFor(async () => (await listWorkerStatuses(redis, ctx.prefix)).some((s) => !known.has(s.workerId)), {
        intervalMs: 100,
        what: "the worker's first heartbeat",
      }).catch((err: Error) => {
        throw new Error(`${err.message}; worker output:\n${w.output().slice(-2000)}`);
      });
      return w;
    },
    async waitUntilServed(model) {
      await waitFor(async () => (await listServedModels(redis, ctx.prefix)).has(model), { intervalMs: 100, what: `a live worker to serve ${model}` });
    },
    async close() {
      await Promise.all(workers.map((w) => w.stop('SIGKILL')));
      await Promise.all(apis.map((a) => a.stop()));
      await redis.quit().catch(() => {}); // a fault test may have left it closed
      await ctx.close();
      assertNoCrossSlot([...apis, ...workers]);
    },
  };
}

/** Registers demo model `file` (default: the one called `name`) as `name` through the API at `baseUrl`, with the admin key. */
export async function registerDemoModel(
  baseUrl: string,
  name: string,
  fields: Record<string, string> = {},
  file = name,
  tokenizerPath?: string,
): Promise<void> {
  const m = demoModel(file);
  const form = new FormData();
  form.set('name', name);
  form.set('maxBatchSize', fields.maxBatchSize ?? String(m.maxBatchSize));
  form.set('maxBatchDelayMs', fields.maxBatchDelayMs ?? String(m.maxBatchDelayMs));
  for (const [field, value] of Object.entries(fields)) if (!form.has(field)) form.set(field, value);
  if (tokenizerPath) form.set('tokenizer', new Blob([await readFile(tokenizerPath)]), 'tokenizer.json');
  form.set('file', new Blob([await readFile(m.path)]), `${name}.onnx`);
  const res = await fetch(`${baseUrl}/v1/models`, { method: 'POST', body: form, headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  if (res.status !== 201) throw new Error(`model upload failed: ${res.status} ${await res.text()}`);
}

/** Deterministic MLP input rows. */
export function mlpRows(rows: number, seed: number): Float32Array {
  const out = new Float32Array(rows * 64);
  for (let i = 0; i < out.length; i++) out[i] = Math.sin(seed * 12.9898 + i * 78.233) * 0.8;
  return out;
}

/** A one-row MLP submission body, distinct per `seed`. */
export const mlpJob = (seed: number) => ({
  model: 'mlp',
  inputs: [{ name: 'features', datatype: 'FP32', shape: [1, 64], data: Array.from(mlpRows(1, seed)) }],
});

/** Runs `tasks` with at most `limit` in flight. */
export async function runLimited<T>(count: number, limit: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, count) }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}

/**
 * A Redis Cluster refuses a multi-key command whose keys hash to different slots (CROSSSLOT). Wherever an API or
 * worker logged one (a retried or swallowed error included), the test that ran the stack fails when it closes it.
 */
function assertNoCrossSlot(processes: readonly TestProcess[]): void {
  for (const p of processes) {
    const line = p
      .output()
      .split('\n')
      .find((l) => l.includes('CROSSSLOT'));
    if (line) throw new Error(`a process of the stack (pid ${p.child.pid}) logged a CROSSSLOT error: ${line.slice(0, 500)}`);
  }
}
