// `npm run demo`: the whole stack on one machine. Services that are not
// configured (DATABASE_URL, REDIS_URL, S3_ENDPOINT) are started embedded under
// .inferq/demo; then migrations, the API, one CPU worker and the demo models.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createPool, runMigrations } from '@inferq/db';
import { writeDemoModels } from '@inferq/onnx-model';
import { loadDemoConfig } from './demo-config.ts';
import { describeStartFailure } from './demo-failure.ts';
import { provideServices } from './provide-services.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const config = loadDemoConfig(ROOT);
const DATA_DIR = config.dataDir;
const log = (line: string) => console.log(`[demo] ${line}`);
/** Undone in reverse order on Ctrl+C or when start-up fails, so nothing is left running. */
const cleanups: Array<() => Promise<unknown>> = [];

async function adminKey(): Promise<string> {
  const file = resolve(DATA_DIR, 'admin-key');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const alnum = (n: number) => Array.from(randomBytes(n), (b) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'[b % 62]).join('');
  const key = `iq_${alnum(12)}_${alnum(32)}`;
  await writeFile(file, key, { mode: 0o600 });
  return key;
}

function startApp(entry: string, env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', resolve(ROOT, entry)], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((r) => child.once('close', r));
  cleanups.push(async () => {
    if (child.pid === undefined) return; // never started
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  });
  return child;
}

/** Resolves with the first stdout line matching `pattern`, echoing everything. */
function waitForLine(child: ChildProcess, pattern: RegExp, name: string): Promise<string> {
  return new Promise((res, rej) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      process.stdout.write(
        text
          .split('\n')
          .filter(Boolean)
          .map((l) => `[${name}] ${l}\n`)
          .join(''),
      );
      const m = text.split('\n').find((l) => pattern.test(l));
      if (m) res(m);
    });
    child.once('error', (err) => rej(new Error(`${name} could not be started: ${err.message}`)));
    child.once('exit', (code) => rej(new Error(`${name} exited with code ${code} before it was ready`)));
  });
}

async function stopAll(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
}

async function main(): Promise<void> {
  await mkdir(DATA_DIR, { recursive: true });
  const services = await provideServices({ env: config.env, dataDir: DATA_DIR, log });
  cleanups.push(() => services.stop());
  const key = await adminKey();
  const env: NodeJS.ProcessEnv = {
    ...config.env,
    ...services.env,
    ADMIN_API_KEY: key,
    PORT: config.port,
    LOG_LEVEL: config.workerLogLevel,
    MODEL_CACHE_DIR: resolve(DATA_DIR, 'model-cache'),
  };

  const pool = createPool({ url: env.DATABASE_URL!, schema: 'public', max: 1 });
  const applied = await runMigrations(pool);
  await pool.end();
  log(`migrations applied: ${applied.length ? applied.join(', ') : 'none pending'}`);

  // Webhook receivers in a demo run on this machine: let them be reached unless the environment says otherwise.
  const api = startApp('apps/api/src/main.ts', { WEBHOOK_ALLOW_PRIVATE: 'true', ...env, LOG_LEVEL: 'info' });
  const listening = await waitForLine(api, /api listening/, 'api');
  const baseUrl = /"address":"([^"]+)"/.exec(listening)?.[1] ?? `http://127.0.0.1:${config.port}`;
  const auth = { authorization: `Bearer ${key}` };

  const registered = new Set(
    ((await (await fetch(`${baseUrl}/v1/models`, { headers: auth })).json()) as { items: Array<{ name: string }> }).items.map((m) => m.name),
  );
  for (const m of await writeDemoModels(resolve(ROOT, '.inferq/models'))) {
    if (registered.has(m.name)) continue;
    const form = new FormData();
    form.set('name', m.name);
    form.set('maxBatchSize', String(m.maxBatchSize));
    form.set('maxBatchDelayMs', String(m.maxBatchDelayMs));
    // The encoder comes with its tokenizer, so the demo serves /v1/embeddings too.
    if (m.tokenizerPath) form.set('tokenizer', new Blob([await readFile(m.tokenizerPath)]), 'tokenizer.json');
    form.set('file', new Blob([await readFile(m.path)]), `${m.name}.onnx`);
    const res = await fetch(`${baseUrl}/v1/models`, { method: 'POST', body: form, headers: auth });
    log(`registered model ${m.name}: HTTP ${res.status}`);
  }

  const worker = startApp('apps/worker/src/launcher.ts', { ...env, WORKER_DEVICES: config.workerDevices });
  worker.stdout!.pipe(process.stdout);

  const sample = JSON.stringify({
    model: 'mlp',
    priority: 'high',
    inputs: [{ name: 'features', datatype: 'FP32', shape: [1, 64], data: Array.from({ length: 64 }, (_, i) => Math.round(Math.sin(i) * 100) / 100) }],
  });
  console.log(`
inferq is running.
  Console:    ${baseUrl}/   (sign in with the admin key)
  API:        ${baseUrl}/v1   (OpenAPI: ${baseUrl}/docs)
  Admin key:  ${key}

Try it:
  KEY=${key}
  curl -s -X POST ${baseUrl}/v1/jobs -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \\
    -d '${sample}'
  curl -s ${baseUrl}/v1/jobs/<id> -H "Authorization: Bearer $KEY"

Press Ctrl+C to stop.
`);
}

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    log('stopping');
    // A service that will not stop still lets the demo exit, saying so.
    stopAll().then(
      () => process.exit(0),
      (err: unknown) => {
        log(`stopping failed: ${(err as Error).message}`);
        process.exit(1);
      },
    );
  });
}

try {
  await main();
} catch (err) {
  if (!stopping) {
    stopping = true;
    console.error(describeStartFailure(err).replace(/^/gm, '[demo] '));
    await stopAll();
    process.exit(1);
  }
}
