// Runs `npm run demo` the way a new user meets it, on the Node that runs this
// script, and checks it end to end: no DATABASE_URL, REDIS_URL nor S3_ENDPOINT
// (so the demo starts its embedded Postgres, Redis and S3), a port of its own,
// a fresh data directory; then one job submitted with the admin key the demo
// prints, polled until it succeeds, and Ctrl+C (SIGINT) stops everything with
// exit code 0. `.ci/run` runs it on each Node version it tests.
//
//   node scripts/demo-smoke.mjs        (after `npm ci` and `npm run build:web`)
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DEMO_DIR = resolve(ROOT, '.inferq/demo-smoke');
const LIMIT_MS = 240_000;

const freePort = () =>
  new Promise((res, rej) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
    srv.once('error', rej);
  });

const started = performance.now();
const seconds = () => ((performance.now() - started) / 1000).toFixed(1);
const say = (line) => console.log(`[demo-smoke ${seconds()} s] ${line}`);

await rm(DEMO_DIR, { recursive: true, force: true });
const env = { ...process.env, PORT: String(await freePort()), INFERQ_DEMO_DIR: DEMO_DIR };
for (const name of ['DATABASE_URL', 'REDIS_URL', 'S3_ENDPOINT']) delete env[name];

say(`node ${process.version}: starting the demo with embedded services`);
const demo = spawn(process.execPath, ['--import', 'tsx', 'packages/dev-stack/src/demo.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
let output = '';
demo.stdout.on('data', (c) => (output += c));
demo.stderr.on('data', (c) => (output += c));
const exited = new Promise((res) => demo.once('close', (code, signal) => res({ code, signal })));

const fail = async (why) => {
  console.error(`[demo-smoke] FAILED after ${seconds()} s: ${why}\n--- the demo's last output ---\n${output.slice(-6000)}`);
  if (demo.exitCode === null) demo.kill('SIGINT');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000).unref())]);
  if (demo.exitCode === null) demo.kill('SIGKILL');
  process.exit(1);
};
const guard = setTimeout(() => void fail(`no result within ${LIMIT_MS / 1000} s`), LIMIT_MS);

async function waitFor(what, check, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v) return v;
    if (demo.exitCode !== null) return fail(`the demo exited (code ${demo.exitCode}) while waiting for ${what}`);
    if (Date.now() > deadline) return fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const ready = await waitFor(
  'the demo to say it is running',
  async () => {
    const key = /Admin key:\s+(\S+)/.exec(output)?.[1];
    const api = /API:\s+(\S+)\/v1/.exec(output)?.[1];
    return key && api ? { key, api } : undefined;
  },
  180_000,
);
say(`running at ${ready.api}`);
const headers = { authorization: `Bearer ${ready.key}`, 'content-type': 'application/json' };
const body = {
  model: 'mlp',
  inputs: [{ name: 'features', datatype: 'FP32', shape: [1, 64], data: Array.from({ length: 64 }, (_, i) => Math.sin(i)) }],
};
const id = await waitFor(
  'a job to be accepted',
  async () => {
    const res = await fetch(`${ready.api}/v1/jobs`, { method: 'POST', headers, body: JSON.stringify(body) });
    // 503 while the worker has not yet said it serves the model: asked again.
    return res.status === 202 ? (await res.json()).id : undefined;
  },
  60_000,
);
const job = await waitFor(
  `job ${id} to finish`,
  async () => {
    const j = await (await fetch(`${ready.api}/v1/jobs/${id}`, { headers })).json();
    return ['succeeded', 'failed', 'canceled', 'expired'].includes(j.status) ? j : undefined;
  },
  60_000,
);
if (job.status !== 'succeeded') await fail(`job ${id} ended ${job.status}: ${JSON.stringify(job.error ?? job)}`);
say(`job ${id} succeeded: ${job.outputs.map((o) => `${o.name} [${o.shape}]`).join(', ')}`);

demo.kill('SIGINT');
const end = await Promise.race([exited, new Promise((r) => setTimeout(() => r(undefined), 60_000).unref())]);
if (!end) await fail('the demo did not stop within 60 s of Ctrl+C');
if (end.code !== 0) await fail(`the demo stopped with ${end.signal ?? `code ${end.code}`} after Ctrl+C`);
clearTimeout(guard);
say('stopped cleanly on Ctrl+C');
