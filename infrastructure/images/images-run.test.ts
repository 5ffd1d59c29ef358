import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createTestContext, demoModel, mlpJob, runLimited, waitFor, type TestContext } from '@inferq/test-utils';

// The images, built from the Dockerfile as it is and run as containers
// (`npm run test:images`; .ci/run runs it). The base is made here from
// Debian's and npm's packages (no registry is reachable); podman runs the
// migration step, the API and the worker with the pod spec's security
// settings (uid 10001, read-only root, every capability dropped, no new
// privileges) on the host's network, against this run's Postgres, Redis and
// S3 on loopback. Jobs go in through the API container and come back from the
// worker container; each one's /metrics and logs are read; a worker container
// killed mid-batch and started again loses no job.
//
// Not here yet: `podman kube play` of the rendered Deployments (their
// ConfigMap, Secret and probes), and the compose file run by an engine.

const exec = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const TAG = 'check';
const env = { ...process.env, CONTAINERS_CONF: process.env.CONTAINERS_CONF ?? resolve(import.meta.dirname, 'containers.conf') };
const podman = async (...args: string[]) => (await exec('podman', args, { env, maxBuffer: 64 * 1024 * 1024 })).stdout.trim();

const freePort = () =>
  new Promise<number>((res, rej) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => res(port));
    });
    srv.once('error', rej);
  });

/** The pod spec's container settings (k8s/base/*-deployment.yaml), as podman run flags. */
const POD_SECURITY = ['--user', '10001:10001', '--read-only', '--cap-drop', 'all', '--security-opt', 'no-new-privileges', '--tmpfs', '/tmp'];

let ctx: TestContext;
let name: string;
let apiUrl: string;
let workerMetricsPort: number;
let serviceEnv: string[];
const auth = { authorization: `Bearer ${ADMIN_KEY}` };

async function startWorker(): Promise<void> {
  await podman(
    'run', '-d', '--name', `${name}-worker`, '--network', 'host', ...POD_SECURITY, ...serviceEnv,
    '-e', `METRICS_PORT=${workerMetricsPort}`, '-e', 'METRICS_HOST=127.0.0.1', '-e', 'HEARTBEAT_INTERVAL_MS=500',
    '-e', 'WORKER_LOCK_DURATION_MS=3000', '-e', 'WORKER_STALLED_INTERVAL_MS=1000',
    '-v', `${name}-models:/var/cache/inferq/models`, `localhost/inferq-worker:${TAG}`,
  ); // prettier-ignore
}

/** The API's /readyz: a live worker, and none of the registered models without one. */
const workerServes = async () => {
  const ready = (await (await fetch(`${apiUrl}/readyz`)).json()) as { modelsWithoutWorker: string[]; checks: { workers: { ok: boolean } } };
  return ready.checks.workers.ok && ready.modelsWithoutWorker.length === 0;
};

beforeAll(async () => {
  const built = await exec('bash', ['scripts/build-images.sh', TAG], { cwd: ROOT, env, maxBuffer: 64 * 1024 * 1024 });
  console.log(`images:\n${built.stdout}`);
  // The migration step applies everything after the first migration to a fresh schema.
  ctx = await createTestContext({ migrateUpTo: '0001_create_tables' });
  name = `inferq-${ctx.id}`;
  serviceEnv = Object.entries({ ...ctx.env, ADMIN_API_KEY: ADMIN_KEY, LOG_LEVEL: 'info' }).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  [apiUrl, workerMetricsPort] = [`http://127.0.0.1:${await freePort()}`, await freePort()];
}, 1_200_000);

afterAll(async () => {
  if (name) {
    await podman('rm', '-f', '-t', '0', `${name}-api`, `${name}-worker`).catch(() => '');
    await podman('volume', 'rm', '-f', `${name}-models`).catch(() => '');
    // Each build leaves the layers of the last one untagged (the next build's cache): keep a day of them.
    await podman('image', 'prune', '-f', '--filter', 'until=24h').catch(() => '');
  }
  await ctx?.close();
});

describe('the images, run as containers', () => {
  it('migrates, serves the API with its health check, and runs jobs in the worker container', async () => {
    const migrated = await podman(
      'run',
      '--rm',
      '--network',
      'host',
      ...POD_SECURITY,
      ...serviceEnv,
      `localhost/inferq-api:${TAG}`,
      'node',
      'dist/api/migrate.js',
    );
    expect(migrated).toContain('"msg":"migrations applied"');

    const port = new URL(apiUrl).port;
    await podman(
      'run',
      '-d',
      '--name',
      `${name}-api`,
      '--network',
      'host',
      ...POD_SECURITY,
      ...serviceEnv,
      '-e',
      `PORT=${port}`,
      '-e',
      'HOST=127.0.0.1',
      `localhost/inferq-api:${TAG}`,
    );
    await waitFor(async () => (await fetch(`${apiUrl}/healthz`)).ok, { timeoutMs: 60_000, what: 'the API container to answer /healthz' });
    // The image's own HEALTHCHECK, run by the engine, follows PORT.
    await podman('healthcheck', 'run', `${name}-api`);

    const model = demoModel('mlp');
    const form = new FormData();
    form.set('name', 'mlp');
    form.set('file', new Blob([await readFile(model.path)]), 'mlp.onnx');
    const registered = await fetch(`${apiUrl}/v1/models`, { method: 'POST', body: form, headers: auth });
    expect(registered.status, await registered.clone().text()).toBe(201);

    await startWorker();
    await waitFor(workerServes, { timeoutMs: 60_000, what: 'the worker container to serve mlp' });
    await podman('healthcheck', 'run', `${name}-worker`);

    const ids = await runLimited(40, 8, async (i) => {
      const res = await fetch(`${apiUrl}/v1/jobs`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify(mlpJob(i)),
      });
      expect(res.status).toBe(202);
      return ((await res.json()) as { id: string }).id;
    });
    for (const id of ids) {
      const job = await waitFor(
        async () => {
          const j = (await (await fetch(`${apiUrl}/v1/jobs/${id}`, { headers: auth })).json()) as { status: string; outputs?: Array<{ shape: number[] }> };
          return j.status === 'succeeded' ? j : undefined;
        },
        { timeoutMs: 60_000, what: `job ${id} to succeed` },
      );
      expect(job.outputs?.[0]?.shape).toEqual([1, 16]);
    }

    const apiMetrics = await (await fetch(`${apiUrl}/metrics`)).text();
    expect(apiMetrics).toMatch(/^inferq_jobs_submitted_total\{[^}]*model="mlp"[^}]*\} 40$/m);
    const workerMetrics = await (await fetch(`http://127.0.0.1:${workerMetricsPort}/metrics`)).text();
    expect(workerMetrics).toMatch(/^inferq_jobs_finished_total\{[^}]*outcome="succeeded"[^}]*\} 40$/m);
    // Logs are JSON lines on stdout, each with the process's name.
    for (const app of ['api', 'worker']) {
      const lines = (await podman('logs', `${name}-${app}`)).split('\n').filter((l) => l.startsWith('{'));
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.map((l) => (JSON.parse(l) as { name: string }).name)).toContain(`inferq-${app}`);
    }
  }, 300_000);

  it('loses no job when the worker container is killed mid-batch and started again', async () => {
    const ids = await runLimited(300, 16, async (i) => {
      const res = await fetch(`${apiUrl}/v1/jobs`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify(mlpJob(i)),
      });
      return ((await res.json()) as { id: string }).id;
    });
    await waitFor(async () => (await ctx.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE status = 'succeeded'")).rows[0]!.n > 60, {
      intervalMs: 5,
      what: 'some of the jobs to finish',
    });
    await podman('kill', '--signal', 'KILL', `${name}-worker`);
    await podman('start', `${name}-worker`);
    await waitFor(
      async () =>
        (await ctx.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) AND status = 'succeeded'", [ids])).rows[0]!.n ===
        ids.length,
      { timeoutMs: 120_000, intervalMs: 250, what: 'every job to succeed after the restart' },
    );
  }, 300_000);
});
