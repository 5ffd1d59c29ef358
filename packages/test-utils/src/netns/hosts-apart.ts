import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRedisConnection, listWorkerStatuses } from '@inferq/queue';
import { startProcess, type TestProcess } from '../processes.ts';
import { ADMIN_KEY, FAST_WORKER_ENV, registerDemoModel } from '../stack.ts';
import { createTestContext, type TestContext } from '../test-context.ts';
import { waitFor } from '../wait-for.ts';
import { createLinkFaults, type LinkFaults } from './link-faults.ts';
import { createPrivateNetwork, type NetnsHost, type PrivateNetwork } from './network.ts';
import { SERVICE_PORTS } from './service-ports.ts';

const HOST_SERVICE = 'packages/test-utils/src/netns/host-service.ts';

export interface HostsApartApi {
  host: NetnsHost;
  process: TestProcess;
  baseUrl: string;
}

export interface HostsApartWorker {
  host: NetnsHost;
  process: TestProcess;
  /** Its id in the registry and in `jobs.worker_id` / `batches.worker_id`. */
  workerId: string;
}

export interface HostsApart {
  network: PrivateNetwork;
  faults: LinkFaults;
  ctx: TestContext;
  redis: NetnsHost;
  postgres: NetnsHost;
  s3: NetnsHost;
  apis: [HostsApartApi, HostsApartApi];
  workers: [HostsApartWorker, HostsApartWorker];
  /** Latency added each way to every worker↔Redis chunk (the relay on the Redis host that the workers' REDIS_URL names). */
  setWorkerRedisDelayMs(ms: number): Promise<void>;
  /** Stops Postgres (a clean shutdown: every connection closed) and starts it again over its data; resolves once it answers. */
  restartPostgres(): Promise<void>;
  /** Registers demo model `name` through the first API. */
  registerModel(name: string, fields?: Record<string, string>): Promise<void>;
  close(): Promise<void>;
}

export interface HostsApartOptions {
  apiEnv?: Record<string, string>;
  workerEnv?: Record<string, string>;
}

async function startHostService(host: NetnsHost, kind: string, dir: string): Promise<{ process: TestProcess; env: Record<string, string> }> {
  const service = startProcess(HOST_SERVICE, {}, [], [kind, host.address, join(dir, kind)], { prefix: host.exec, stdin: true });
  await service.waitForOutput(/READY \{.*\}\n/, 90_000);
  return { process: service, env: JSON.parse(/READY (\{.*\})\n/.exec(service.output())![1]!) as Record<string, string> };
}

/**
 * Redis, Postgres, S3, two API replicas and two workers, each on a host of
 * its own (a network namespace on a private bridge): every connection crosses
 * a real address, so a test can partition, thin or slow one link at a time
 * (`faults`, `setWorkerRedisDelayMs`). The test process reaches every host
 * from the bridge's root address. Needs root and iproute2.
 */
export async function startHostsApart(options: HostsApartOptions = {}): Promise<HostsApart> {
  const network = await createPrivateNetwork(['redis', 'postgres', 's3', 'api1', 'api2', 'worker1', 'worker2']);
  const h = network.hosts as Record<'redis' | 'postgres' | 's3' | 'api1' | 'api2' | 'worker1' | 'worker2', NetnsHost>;
  const dir = await mkdtemp(join(tmpdir(), 'inferq-hosts-apart-'));
  // Run as root, Postgres runs as the `postgres` user, which must reach its data below here.
  await chmod(dir, 0o755);
  const processes: TestProcess[] = [];
  const services: TestProcess[] = [];
  let ctx: TestContext | undefined;
  const close = async () => {
    await Promise.all(processes.map((p) => p.stop('SIGKILL')));
    await ctx?.close().catch(() => {});
    for (const s of services) s.child.stdin?.end();
    await Promise.all(services.map((s) => waitFor(() => s.child.exitCode !== null || s.child.signalCode !== null, { timeoutMs: 20_000 }).catch(() => {})));
    await network.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const faults = await createLinkFaults(Object.values(h));
    const started = await Promise.all([
      startHostService(h.redis, 'redis', dir),
      startHostService(h.postgres, 'postgres', dir),
      startHostService(h.s3, 's3', dir),
    ]);
    services.push(...started.map((s) => s.process));
    const redisService = started[0].process;
    const postgresService = started[1].process;
    ctx = await createTestContext({ services: Object.assign({}, ...started.map((s) => s.env)) as Record<string, string> });
    const env = ctx.env;

    const startApi = async (host: NetnsHost): Promise<HostsApartApi> => {
      const apiEnv = {
        ...env,
        HOST: host.address,
        PORT: String(SERVICE_PORTS.api),
        ADMIN_API_KEY: ADMIN_KEY,
        RATE_LIMIT_PER_MIN: '100000000',
        WEBHOOK_ALLOW_PRIVATE: 'true',
        WEBHOOK_SIGNING_SECRET: 'hosts-apart-test-server-secret-0123456789',
        ...options.apiEnv,
      };
      const api = startProcess('apps/api/src/main.ts', apiEnv, [], [], { prefix: host.exec });
      processes.push(api);
      const baseUrl = `http://${host.address}:${SERVICE_PORTS.api}`;
      await waitFor(async () => (await fetch(`${baseUrl}/healthz`)).ok, { timeoutMs: 60_000, intervalMs: 100, what: `the API on ${host.name}` }).catch(
        (err: Error) => {
          throw new Error(`${err.message}; API output:\n${api.output().slice(-2000)}`);
        },
      );
      return { host, process: api, baseUrl };
    };
    const apis = (await Promise.all([startApi(h.api1), startApi(h.api2)])) as [HostsApartApi, HostsApartApi];

    const registry = createRedisConnection(env.REDIS_URL!, 'consumer');
    registry.on('error', () => {});
    const startWorker = async (host: NetnsHost): Promise<HostsApartWorker> => {
      const known = new Set((await listWorkerStatuses(registry, ctx!.prefix)).map((s) => s.workerId));
      const workerEnv = {
        ...env,
        ...FAST_WORKER_ENV,
        // Through the relay on the Redis host, so a test can slow this link; partitions and loss act on the same addresses.
        REDIS_URL: `redis://${h.redis.address}:${SERVICE_PORTS.redisRelay}`,
        MODEL_CACHE_DIR: `.inferq/test-model-cache/${ctx!.id}-${host.name}`,
        ...options.workerEnv,
      };
      const worker = startProcess('apps/worker/src/main.ts', workerEnv, [], [], { prefix: host.exec });
      processes.push(worker);
      const workerId = await waitFor(async () => (await listWorkerStatuses(registry, ctx!.prefix)).find((s) => !known.has(s.workerId))?.workerId, {
        timeoutMs: 60_000,
        intervalMs: 100,
        what: `the first heartbeat of the worker on ${host.name}`,
      }).catch((err: Error) => {
        throw new Error(`${err.message}; worker output:\n${worker.output().slice(-2000)}`);
      });
      return { host, process: worker, workerId };
    };
    let workers: [HostsApartWorker, HostsApartWorker];
    try {
      workers = [await startWorker(h.worker1), await startWorker(h.worker2)];
    } finally {
      registry.disconnect();
    }

    let delays = 0;
    return {
      network,
      faults,
      ctx,
      redis: h.redis,
      postgres: h.postgres,
      s3: h.s3,
      apis,
      workers,
      async setWorkerRedisDelayMs(ms) {
        const from = redisService.output().length;
        redisService.child.stdin!.write(`delay ${ms}\n`);
        delays++;
        await waitFor(() => redisService.output().slice(from).includes(`DELAY ${ms}`), { timeoutMs: 5_000, what: `the relay to take delay ${ms} (${delays})` });
      },
      async restartPostgres() {
        const from = postgresService.output().length;
        postgresService.child.stdin!.write('restart\n');
        await waitFor(() => postgresService.output().slice(from).includes('RESTARTED'), { timeoutMs: 60_000, what: 'Postgres to restart' });
      },
      registerModel: (name, fields) => registerDemoModel(apis[0].baseUrl, name, fields),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
