/**
 * One worker-side drain on a fresh stack, for quick before/after runs of the
 * worker's path: `node --import tsx apps/bench/src/drain-probe.ts [jobs] [timed|real]`
 * (default 20,000 CNN jobs on the timed device, H200 figures). Prints the
 * drain's items/s, device busy share, CPU a job by tier and WAL, then the
 * statements Postgres was seen running (pg_stat_activity sampled every 10 ms),
 * most often first: where its time goes, without pg_stat_statements.
 */
import { resolve } from 'node:path';
import { provideServices } from '@inferq/dev-stack';
import { writeDemoModels } from '@inferq/onnx-model';
import { publishTestEnv, startStack } from '@inferq/test-utils';
import { drainQueued } from './drain-run.ts';
import { SHIPPED_WORKER_ENV, tensorBody } from './driver.ts';
import { deviceTimeEnv, H200_CNN_BATCH, TIMED_WORKER_ENTRY } from './timed-device/device-time.ts';

const jobs = Number(process.argv[2] ?? 20_000);
const timed = process.argv[3] !== 'real';
const ROOT = resolve(import.meta.dirname, '../../..');
const services = await provideServices({ env: { ...process.env }, dataDir: resolve(ROOT, '.inferq/bench-services'), log: console.log });
publishTestEnv(services.env, await writeDemoModels(resolve(ROOT, '.inferq/models')));
const stack = await startStack({ logLevel: 'warn' });
try {
  await stack.registerModel('cnn', { maxBatchSize: '32', maxBatchDelayMs: '5' });
  const image = new Float32Array(3 * 32 * 32).map((_, i) => Math.sin(i));
  const body = tensorBody('json', 'cnn', 'image', [1, 3, 32, 32], image);
  const seen = new Map<string, number>();
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const { rows } = await stack.ctx.pool.query(
        `SELECT application_name AS app, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS q FROM pg_stat_activity
          WHERE state = 'active' AND pid <> pg_backend_pid() AND datname = current_database()`,
      );
      for (const r of rows) seen.set(`${r.app}: ${r.q}`, (seen.get(`${r.app}: ${r.q}`) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const run = await drainQueued(stack, {
    model: 'cnn',
    jobs,
    body,
    workerEnv: { ...SHIPPED_WORKER_ENV, INTRA_OP_THREADS: '1', WORKER_MODELS: 'cnn', WORKER_DEVICE: 'cpu', ...(timed ? deviceTimeEnv(H200_CNN_BATCH) : {}) },
    sessionCores: 1,
    workerEntry: timed ? TIMED_WORKER_ENTRY : undefined,
  });
  sampling = false;
  await sampler;
  console.log(
    JSON.stringify({
      itemsPerS: Math.round(run.itemsPerS),
      busy: run.deviceBusy,
      cpu: run.costs.cpuUsPerJob,
      wal: run.costs.walBytesPerJob,
      submitPg: run.submitCosts.cpuUsPerJob.postgres,
    }),
  );
  for (const [q, n] of [...seen].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(n, q);
} finally {
  await stack.close();
  await services.stop();
}
// The embedded services' handles would keep the process alive.
process.exit(0);
