/**
 * One worker-side drain on a fresh stack, for quick before/after runs of the
 * worker's path: `node --import tsx apps/bench/src/drain-probe.ts [jobs] [timed|real] [batches in flight] [feeders]
 * [carried MB] [checkpoint] [inline=N] [segments=BOOL] [life] [group=N] [prof=DIR] [apiprof=DIR] [node=FLAG…] [warm=N]`
 * (default 20,000 CNN jobs on the timed device, H200 figures, WORKER_BATCHES_IN_FLIGHT 2, `auto` to follow latencies;
 * WORKER_FEEDERS 1; the API's QUEUE_CARRIED_INPUTS_MB, 0 for claims that read every input; `checkpoint`: a CHECKPOINT
 * between the submits and the drain, whose full-page images the drain then writes; `inline=N`: the API's
 * INLINE_TENSOR_MAX_BYTES, below the input's 12 KiB to keep inputs in object storage; `segments=false`: the API's
 * INPUT_SEGMENTS off, inputs kept in the rows; `life`: then the WAL the drained jobs write at a freeze and a purge
 * (drainQueued's laterWal); `group=N`: the API's QUEUE_GROUP_MAX; `prof=DIR`: the worker under `node --cpu-prof`, each
 * thread's profile written to DIR as it stops, its figures then dearer; `apiprof=DIR`: the API the same way;
 * `node=FLAG`: a Node flag for the worker, e.g. `node=--max-semi-space-size=32`, repeatable; `warm=N`: N jobs drained
 * first by the same worker, outside the
 * readings: drainQueued's warmupJobs). The worker runs bundled, as the images run it,
 * unless BENCH_WORKER_FROM=sources (worker-entries.ts). Prints the
 * drain's items/s, device busy share, CPU a job by tier and WAL (the submits' Postgres CPU and WAL apart), then the
 * statements Postgres was seen running (pg_stat_activity sampled every 10 ms),
 * most often first, the statements' calls and time from pg_stat_statements
 * where the server loads it (the embedded one does), and the CPU each kind of
 * backend used while it was seen (its /proc times at its first and last
 * sample, by application name or backend type). For plans, load auto_explain
 * in the worker's sessions (`-c session_preload_libraries=auto_explain`).
 */
import { resolve } from 'node:path';
import { provideServices } from '@inferq/dev-stack';
import { writeDemoModels } from '@inferq/onnx-model';
import { publishTestEnv, startStack } from '@inferq/test-utils';
import { processCpuSeconds } from './costs/process-cpu.ts';
import { drainQueued } from './drain-run.ts';
import { SHIPPED_WORKER_ENV, tensorBody } from './driver.ts';
import { deviceTimeEnv, H200_CNN_BATCH } from './timed-device/device-time.ts';
import { workerEntries, workerRuntime } from './worker-entries.ts';

const jobs = Number(process.argv[2] ?? 20_000);
const timed = process.argv[3] !== 'real';
const inFlight = process.argv[4] ?? '2';
const feeders = process.argv[5] ?? '1';
const carriedMb = process.argv[6];
const options = process.argv.slice(7);
const checkpointFirst = options.includes('checkpoint');
const inlineMax = options.find((a) => a.startsWith('inline='))?.slice('inline='.length);
const segments = options.find((a) => a.startsWith('segments='))?.slice('segments='.length);
const laterWal = options.includes('life');
const groupMax = options.find((a) => a.startsWith('group='))?.slice('group='.length);
const profileDir = options.find((a) => a.startsWith('prof='))?.slice('prof='.length);
const apiProfileDir = options.find((a) => a.startsWith('apiprof='))?.slice('apiprof='.length);
const warmupJobs = Number(options.find((a) => a.startsWith('warm='))?.slice('warm='.length) ?? 0);
const nodeFlags = options.filter((a) => a.startsWith('node=')).map((a) => a.slice('node='.length));
const ROOT = resolve(import.meta.dirname, '../../..');
const services = await provideServices({ env: { ...process.env }, dataDir: resolve(ROOT, '.inferq/bench-services'), log: console.log });
publishTestEnv(services.env, await writeDemoModels(resolve(ROOT, '.inferq/models')));
const entries = workerEntries();
const runtime = workerRuntime();
console.log(`workers from ${entries.from} (BENCH_WORKER_FROM) on Node ${runtime.version} (BENCH_WORKER_NODE) with ${runtime.nodeArgs.join(' ')}`);
const stack = await startStack({
  logLevel: 'warn',
  entryPoints: { worker: entries.worker },
  workerRuntime: runtime,
  ...(apiProfileDir !== undefined && { apiNodeArgs: ['--cpu-prof', `--cpu-prof-dir=${resolve(apiProfileDir)}`] }),
  apiEnv: {
    ...(carriedMb !== undefined && { QUEUE_CARRIED_INPUTS_MB: carriedMb }),
    ...(inlineMax !== undefined && { INLINE_TENSOR_MAX_BYTES: inlineMax }),
    ...(segments !== undefined && { INPUT_SEGMENTS: segments }),
    ...(groupMax !== undefined && { QUEUE_GROUP_MAX: groupMax }),
  },
});
try {
  await stack.registerModel('cnn', { maxBatchSize: '32', maxBatchDelayMs: '5' });
  const image = new Float32Array(3 * 32 * 32).map((_, i) => Math.sin(i));
  const body = tensorBody('json', 'cnn', 'image', [1, 3, 32, 32], image);
  const seen = new Map<string, number>();
  const backends = new Map<number, { kind: string; first: number; last: number }>();
  let sampling = false;
  let probing = true;
  const sampler = (async () => {
    while (probing) {
      if (!sampling) {
        await new Promise((r) => setTimeout(r, 10));
        continue;
      }
      const { rows } = await stack.ctx.pool.query(
        `SELECT pid, state, coalesce(nullif(application_name, ''), backend_type) AS app, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS q
           FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND (datname IS NULL OR datname = current_database())`,
      );
      for (const r of rows) {
        if (r.state === 'active') seen.set(`${r.app}: ${r.q}`, (seen.get(`${r.app}: ${r.q}`) ?? 0) + 1);
        const cpu = processCpuSeconds(r.pid);
        if (cpu === null) continue;
        const b = backends.get(r.pid);
        // A backend still starting has no application name yet: it takes its name once it has one.
        if (b) Object.assign(b, { last: cpu, kind: b.kind === 'client backend' ? r.app : b.kind });
        else backends.set(r.pid, { kind: r.app, first: cpu, last: cpu });
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const run = await drainQueued(stack, {
    model: 'cnn',
    jobs,
    body,
    workerEnv: {
      ...SHIPPED_WORKER_ENV,
      INTRA_OP_THREADS: '1',
      WORKER_MODELS: 'cnn',
      WORKER_DEVICE: 'cpu',
      WORKER_BATCHES_IN_FLIGHT: inFlight,
      WORKER_FEEDERS: feeders,
      ...(timed ? deviceTimeEnv(H200_CNN_BATCH) : {}),
    },
    sessionCores: 1,
    checkpointFirst,
    laterWal,
    workerEntry: timed ? entries.timedWorker : undefined,
    workerNodeArgs: [...nodeFlags, ...(profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${resolve(profileDir)}`])],
    warmupJobs,
    onStart: () => {
      sampling = true;
      // The drain's meter has created pg_stat_statements where the server loads it; its counts start here.
      void stack.ctx.pool.query('SELECT public.pg_stat_statements_reset()').catch(() => {});
    },
  });
  probing = false;
  await sampler;
  console.log(
    JSON.stringify({
      itemsPerS: Math.round(run.itemsPerS),
      busy: run.deviceBusy,
      batch: run.avgBatchSize,
      // With feeder threads, `worker main` is the device host's thread and `worker session` the busiest feeder.
      cpu: run.costs.cpuUsPerJob,
      wal: run.costs.walBytesPerJob,
      submitApi: run.submitCosts.cpuUsPerJob.api,
      submitRedis: run.submitCosts.cpuUsPerJob.redis,
      submitPg: run.submitCosts.cpuUsPerJob.postgres,
      submitWal: run.submitCosts.walBytesPerJob,
      ...(run.laterWal && { freezeWal: run.laterWal.freeze, purgeWal: run.laterWal.purge }),
    }),
  );
  for (const [q, n] of [...seen].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(n, q);
  const statements = await stack.ctx.pool
    .query(
      `SELECT calls, rows, round(total_exec_time)::int AS exec_ms, left(regexp_replace(query, '\\s+', ' ', 'g'), 100) AS q
         FROM public.pg_stat_statements ORDER BY total_exec_time DESC LIMIT 12`,
    )
    .catch(() => ({ rows: [] }));
  for (const s of statements.rows) console.log(`${s.calls} calls, ${s.rows} rows, ${s.exec_ms} ms: ${s.q}`);
  const byKind = new Map<string, { backends: number; usPerJob: number }>();
  for (const b of backends.values()) {
    const k = byKind.get(b.kind) ?? { backends: 0, usPerJob: 0 };
    byKind.set(b.kind, { backends: k.backends + 1, usPerJob: k.usPerJob + ((b.last - b.first) * 1e6) / jobs });
  }
  for (const [kind, k] of [...byKind].sort((a, b) => b[1].usPerJob - a[1].usPerJob))
    console.log(`${kind}: ${k.backends} backends, ${Math.round(k.usPerJob)} µs a job`);
} finally {
  await stack.close();
  await services.stop();
}
// The embedded services' handles would keep the process alive.
process.exit(0);
