// `npm run bench [-- --smoke] [--only 1,3] [--out dir] [--device cuda:0]`: every scenario against
// the real stack, started the way the Quick start starts it; the report goes to
// docs/benchmarks/ (or --out).
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createPool } from '@inferq/db';
import { provideServices } from '@inferq/dev-stack';
import { writeDemoModels } from '@inferq/onnx-model';
import { createRedisConnection } from '@inferq/queue';
import { publishTestEnv, requiredTestVar, startStack } from '@inferq/test-utils';
import { describeMachine } from './machine.ts';
import { writeReport } from './report.ts';
import { runScenarios } from './run-scenarios.ts';
import type { BenchContext } from './scenario.ts';
import { SCENARIOS } from './scenarios/index.ts';
import { loadBenchEnv } from './bench-env.ts';
import { workerEntries, workerRuntime } from './worker-entries.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const { values: args } = parseArgs({
  options: { smoke: { type: 'boolean', default: false }, only: { type: 'string' }, out: { type: 'string' }, device: { type: 'string', default: 'cpu' } },
});
const log = (line: string) => console.log(`[bench] ${line}`);

const env = loadBenchEnv();
const services = await provideServices({ env, dataDir: resolve(ROOT, '.inferq/bench-services'), log });
publishTestEnv(services.env, await writeDemoModels(resolve(ROOT, '.inferq/models')));

// Workers start from the bundle the images run, on their Node (worker-entries.ts); the API from its sources (scenario 3 profiles them).
const worker = workerEntries(log).worker;
const runtime = workerRuntime(log);
const ctx: BenchContext = {
  smoke: args.smoke,
  device: args.device,
  size: (full, smoke) => (args.smoke ? smoke : full),
  startStack: (apiEnv, services, apiNodeArgs) =>
    startStack({ logLevel: 'warn', apiEnv, services, apiNodeArgs, entryPoints: { worker }, workerRuntime: runtime }),
  workerRuntime: runtime,
  log,
};
const only = args.only?.split(',').map((s) => s.trim());
const startedAt = new Date().toISOString();
const commit = (() => {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    return undefined; // not a git checkout
  }
})();
try {
  const pool = createPool({ url: requiredTestVar('DATABASE_URL'), schema: 'public', max: 1 });
  // A consumer connection queues the INFO until it is connected; a producer one would fail it.
  const redis = createRedisConnection(requiredTestVar('REDIS_URL'), 'consumer');
  const machine = await describeMachine({ pool, redisInfo: () => redis.info('server') });
  await Promise.all([pool.end(), redis.quit()]);
  log(`database: ${machine.database.state} (${machine.database.relations} relations, catalog ${machine.database.catalogMiB} MiB)`);
  const results = await runScenarios(
    ctx,
    SCENARIOS.filter((s) => !only || only.includes(s.id)),
  );
  const out = resolve(ROOT, args.out ?? 'docs/benchmarks');
  await writeReport(out, {
    machine,
    startedAt,
    commit,
    smoke: args.smoke,
    command: ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' '),
    results,
  });
  log(`report written to ${out}`);
} finally {
  await services.stop();
}
