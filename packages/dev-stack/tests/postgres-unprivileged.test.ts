import { execFile, spawn } from 'node:child_process';
import { chmod, chown, cp, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binaryPath, findPostgresBinaries, type PostgresBinaries } from '../src/postgres-binaries.ts';
import { ensureSystemUser, succeedsAs, type UserIds } from '../src/system-user.ts';

const TEST_USER = 'inferq-test';

function runAs(ids: UserIds, args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      uid: ids.uid,
      gid: ids.gid,
      cwd,
      env: { PATH: process.env.PATH, HOME: cwd },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

// A developer's own account: postgres runs as that user, from where npm put
// the binaries, with nothing copied anywhere. Root (CI) creates the user.
describe.skipIf(process.getuid?.() !== 0)(`embedded Postgres as an unprivileged user (${TEST_USER})`, () => {
  let home: string;
  let ids: UserIds;
  let binaries: PostgresBinaries;

  beforeAll(async () => {
    ids = await ensureSystemUser(TEST_USER);
    home = await mkdtemp(join(tmpdir(), 'inferq user '));
    await chown(home, ids.uid, ids.gid);
    await chmod(home, 0o700);
    const installed = await findPostgresBinaries();
    binaries = installed;
    if (!(await succeedsAs(ids, binaryPath(installed, 'postgres'), ['--version']))) {
      // This checkout is out of the user's reach (a clone under /root): give the user a checkout of its own.
      binaries = { dir: join(home, 'native'), version: installed.version };
      await cp(installed.dir, binaries.dir, { recursive: true, verbatimSymlinks: true });
      await promisify(execFile)('chown', ['-R', `${ids.uid}:${ids.gid}`, binaries.dir]);
    }
    await build({
      entryPoints: [join(import.meta.dirname, 'fixtures', 'postgres-runner.ts')],
      outfile: join(home, 'runner.mjs'),
      bundle: true,
      platform: 'node',
      format: 'esm',
      external: ['pg-native'],
      // pg is CommonJS: its require() calls need a require in an ES module.
      banner: { js: "import { createRequire as bannerRequire } from 'node:module'; const require = bannerRequire(import.meta.url);" },
      logLevel: 'error',
    });
  });

  afterAll(async () => {
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('runs postgres as that user over a data directory in its home, and answers a query', async () => {
    const dataDir = join(home, 'clone', '.inferq', 'postgres');
    const { code, output } = await runAs(ids, [join(home, 'runner.mjs'), dataDir, binaries.dir, binaries.version], home);
    expect(code, output).toBe(0);
    const seen = JSON.parse(output.trim().split('\n').at(-1)!) as { uid: number; dataDir: string; binDir: string; row: { dir: string; db: string } };
    expect(seen).toEqual({ uid: ids.uid, dataDir, binDir: binaries.dir, row: { dir: dataDir, db: 'inferq' } });
    expect((await stat(join(dataDir, 'PG_VERSION'))).uid).toBe(ids.uid);
  });
});
