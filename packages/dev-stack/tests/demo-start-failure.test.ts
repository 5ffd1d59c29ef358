import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DEMO = resolve(import.meta.dirname, '../src/demo.ts');

/** Processes whose command line mentions `text` (redis-server --dir …, postgres -D …). */
async function processesMentioning(text: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of (await readdir('/proc')).filter((p) => /^\d+$/.test(p))) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(text)) found.push(`${pid}: ${cmdline.replaceAll('\0', ' ')}`);
  }
  return found;
}

describe('npm run demo when a service cannot start', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'inferq-demo-failure-'));
    // Reachable as it is, so the broken cluster below is the one postgres is given (no relocation).
    await chmod(dir, 0o755);
    // A cluster directory that is no cluster: postgres refuses to start on it.
    await mkdir(join(dir, 'postgres'), { mode: 0o700 });
    await writeFile(join(dir, 'postgres', 'PG_VERSION'), '18\n');
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('prints the cause and the fix, exits 1 and leaves nothing running', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, INFERQ_DEMO_DIR: dir, INFERQ_SYSTEM_DIR: join(dir, 'system'), PORT: '0' };
    // Nothing configured: the demo starts all three, and Redis and S3 come up before Postgres fails.
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'S3_ENDPOINT']) delete env[name];
    const child = spawn(process.execPath, ['--import', 'tsx', DEMO], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((r) => child.once('close', r));
    const output = `${stdout}\n${stderr}`;

    expect(code, output).toBe(1);
    // Started alongside, then stopped again.
    expect(stdout).toContain('[demo] started embedded Redis');
    expect(stdout).toContain('[demo] started embedded S3');
    expect(stderr).toContain('[demo] could not start Postgres: postgres exited');
    expect(stderr).toMatch(/\[demo\] {3}fix: .*rm -rf '.*\/postgres'.*DATABASE_URL/);
    expect(output).not.toMatch(/^\s+at /m); // no stack trace
    expect(output).not.toMatch(/Unhandled|ERR_UNHANDLED_ERROR/);
    expect(await processesMentioning(dir)).toEqual([]);
  });
});
