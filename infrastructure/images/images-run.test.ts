import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createTestContext, demoModel, mlpJob, runLimited, waitFor, type TestContext } from '@inferq/test-utils';
import { playablePodSpecs, type Playable } from './pod-specs.ts';

// The images, built from the Dockerfile as it is and run as a cluster runs
// them (`npm run test:images`; .ci/run runs it). The base is made here from
// Debian's and npm's packages (no registry is reachable). The migrate Job's
// command runs with `podman run`; `podman kube play` runs the on-prem overlay's
// api and worker Deployments with their ConfigMap, Secret, securityContext
// (uid 10001, read-only root, every capability dropped) and limits, adapted
// only where podman or this machine needs it (pod-specs.ts says what and why),
// against this run's Postgres, Redis and S3 on loopback. Jobs go in through
// the API container and come back from the worker container; each one's probe
// endpoints, /metrics and logs are read; a worker container killed mid-batch
// loses no job. What kube play skips (Services, StatefulSets, HPA, PDBs,
// NetworkPolicies, Ingresses) is checked as text by infrastructure/tests.

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

/** The containers kube play makes: `<deployment>-pod-0-<container>`. */
const API = 'inferq-api-pod-0-api';
const WORKER = 'inferq-worker-pod-0-worker';
const PODS = ['inferq-api-pod-0', 'inferq-worker-pod-0'];

let ctx: TestContext;
let dir: string;
let play: Playable;
let jobEnv: string[];
let apiUrl: string;
let workerUrl: string;
const auth = { authorization: `Bearer ${ADMIN_KEY}` };

/** The API's /readyz: a live worker, and none of the registered models without one. */
const workerServes = async () => {
  const ready = (await (await fetch(`${apiUrl}/readyz`)).json()) as { modelsWithoutWorker: string[]; checks: { workers: { ok: boolean } } };
  return ready.checks.workers.ok && ready.modelsWithoutWorker.length === 0;
};

async function removePods(): Promise<void> {
  await podman('pod', 'rm', '--force', '--ignore', '-t', '0', ...PODS);
  if (play) await podman('secret', 'rm', play.secret.name).catch(() => '');
}

beforeAll(async () => {
  const built = await exec('bash', ['scripts/build-images.sh', TAG], { cwd: ROOT, env, maxBuffer: 64 * 1024 * 1024 });
  console.log(`images:\n${built.stdout}`);
  // The migration step applies everything after the first migration to a fresh schema.
  ctx = await createTestContext({ migrateUpTo: '0001_create_tables' });
  const [apiPort, workerMetricsPort] = [await freePort(), await freePort()];
  [apiUrl, workerUrl] = [`http://127.0.0.1:${apiPort}`, `http://127.0.0.1:${workerMetricsPort}`];
  const { DATABASE_URL, REDIS_URL, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, ...services } = ctx.env;
  const config = { ...services, LOG_LEVEL: 'info' };
  const secrets = {
    DATABASE_URL: DATABASE_URL!,
    REDIS_URL: REDIS_URL!,
    S3_ACCESS_KEY_ID: S3_ACCESS_KEY_ID!,
    S3_SECRET_ACCESS_KEY: S3_SECRET_ACCESS_KEY!,
    ADMIN_API_KEY: ADMIN_KEY,
    WEBHOOK_SIGNING_SECRET: 'images-check-webhook-signing-secret',
  };
  // The migrate Job's environment: the ConfigMap and the Secret.
  jobEnv = Object.entries({ ...config, ...secrets }).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  play = playablePodSpecs({
    images: { api: `localhost/inferq-api:${TAG}`, worker: `localhost/inferq-worker:${TAG}` },
    config,
    secrets,
    apiPort,
    workerMetricsPort,
    workerEnv: { HEARTBEAT_INTERVAL_MS: '500', WORKER_LOCK_DURATION_MS: '3000', WORKER_STALLED_INTERVAL_MS: '1000' },
  });
  dir = await mkdtemp(join(tmpdir(), 'inferq-play-'));
  await writeFile(join(dir, 'play.yaml'), play.yaml);
  await writeFile(join(dir, 'secret.json'), play.secret.json);
  await removePods(); // a run killed before its cleanup
}, 1_200_000);

afterAll(async () => {
  await removePods();
  // Each build leaves the layers of the last one untagged (the next build's cache): keep a day of them.
  await podman('image', 'prune', '-f', '--filter', 'until=24h').catch(() => '');
  if (dir) await rm(dir, { recursive: true, force: true });
  await ctx?.close();
});

const submit = async (i: number) => {
  const res = await fetch(`${apiUrl}/v1/jobs`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(mlpJob(i)) });
  expect(res.status).toBe(202);
  return ((await res.json()) as { id: string }).id;
};
const succeeded = async (ids: string[]) =>
  (await ctx.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) AND status = 'succeeded'", [ids])).rows[0]!.n;

describe('the images, run as the on-prem Deployments', () => {
  it("migrates with the Job's command, plays both Deployments, and runs jobs from the API container in the worker container", async () => {
    const migrated = await podman(
      'run',
      '--rm',
      '--network',
      'host',
      '--read-only',
      '--cap-drop',
      'all',
      ...jobEnv,
      `localhost/inferq-api:${TAG}`,
      ...play.migrateCommand,
    );
    expect(migrated).toContain('"msg":"migrations applied"');

    await podman('secret', 'create', play.secret.name, join(dir, 'secret.json'));
    await podman('kube', 'play', '--network', 'host', join(dir, 'play.yaml'));
    // The probes' endpoints, as a kubelet would ask them (podman turns an httpGet probe into a curl the images do not carry).
    await waitFor(async () => (await fetch(`${apiUrl}/healthz`)).ok, { timeoutMs: 60_000, what: 'the API container to answer /healthz' });
    await waitFor(async () => (await fetch(`${workerUrl}/healthz`)).ok, { timeoutMs: 60_000, what: 'the worker container to answer /healthz' });
    // The images' own HEALTHCHECK command, inside the played containers, follows PORT and METRICS_PORT.
    await podman('exec', API, 'node', 'healthcheck.mjs', 'PORT', '8080', 'HOST');
    await podman('exec', WORKER, 'node', 'healthcheck.mjs', 'METRICS_PORT', '9464', 'METRICS_HOST');
    // The pod spec's securityContext, as podman applied it.
    const applied = JSON.parse(await podman('inspect', API, WORKER)) as Array<{ Config: { User: string }; HostConfig: { ReadonlyRootfs: boolean } }>;
    expect(applied.map((c) => [c.Config.User, c.HostConfig.ReadonlyRootfs])).toEqual([
      ['10001:10001', true],
      ['10001:10001', true],
    ]);

    const form = new FormData();
    form.set('name', 'mlp');
    form.set('file', new Blob([await readFile(demoModel('mlp').path)]), 'mlp.onnx');
    const registered = await fetch(`${apiUrl}/v1/models`, { method: 'POST', body: form, headers: auth });
    expect(registered.status, await registered.clone().text()).toBe(201);
    await waitFor(workerServes, { timeoutMs: 60_000, what: 'the worker container to serve mlp' });
    expect((await fetch(`${workerUrl}/readyz`)).status).toBe(200);

    const ids = await runLimited(40, 8, submit);
    await waitFor(async () => (await succeeded(ids)) === ids.length, { timeoutMs: 60_000, intervalMs: 100, what: 'the 40 jobs to succeed' });
    const job = (await (await fetch(`${apiUrl}/v1/jobs/${ids[0]}`, { headers: auth })).json()) as { outputs: Array<{ shape: number[] }> };
    expect(job.outputs[0]!.shape).toEqual([1, 16]);

    expect(await (await fetch(`${apiUrl}/metrics`)).text()).toMatch(/^inferq_jobs_submitted_total\{[^}]*model="mlp"[^}]*\} 40$/m);
    expect(await (await fetch(`${workerUrl}/metrics`)).text()).toMatch(/^inferq_jobs_finished_total\{[^}]*outcome="succeeded"[^}]*\} 40$/m);
    // Logs are JSON lines on stdout, each with the process's name.
    for (const [container, name] of [
      [API, 'inferq-api'],
      [WORKER, 'inferq-worker'],
    ] as const) {
      const lines = (await podman('logs', container)).split('\n').filter((l) => l.startsWith('{'));
      expect(lines.map((l) => (JSON.parse(l) as { name: string }).name)).toContain(name);
    }
  }, 300_000);

  it('loses no job when the worker container is killed mid-batch; the pod restarts it', async () => {
    const restarts = async () => Number(await podman('inspect', '--format', '{{.RestartCount}}', WORKER));
    const before = await restarts();
    const pid = Number(await podman('inspect', '--format', '{{.State.Pid}}', WORKER));
    const finished = async () => (await ctx.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE status = 'succeeded'")).rows[0]!.n;
    const finishedBefore = await finished();
    const submitting = runLimited(1000, 16, submit);
    await waitFor(async () => (await finished()) > finishedBefore + 60, { intervalMs: 5, what: 'some of the jobs to finish' });
    // A crash, not a stop: `podman kill` counts as the operator's stop, which no restart policy undoes.
    process.kill(pid, 'SIGKILL');
    const doneAtKill = (await finished()) - finishedBefore;
    const ids = await submitting;
    expect(doneAtKill).toBeLessThan(ids.length);
    // The pod's restartPolicy (Always) brings it back, as a kubelet would; started by hand where podman does not.
    const restarted = await waitFor(async () => (await restarts()) > before || undefined, { timeoutMs: 30_000, what: 'the pod to restart its worker' }).then(
      () => 'by the pod',
      async () => (await podman('start', WORKER), 'by hand'),
    );
    await waitFor(async () => (await succeeded(ids)) === ids.length, { timeoutMs: 120_000, intervalMs: 250, what: 'every job to succeed after the restart' });
    console.log(`worker container killed with ${doneAtKill} of ${ids.length} jobs done, restarted ${restarted}; all succeeded`);
  }, 300_000);
});
