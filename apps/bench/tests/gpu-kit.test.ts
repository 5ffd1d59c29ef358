import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../../..');

// The GPU kit as far as a machine without a GPU takes it: built (this Node in place of npm's, no
// Debian packages, no archive), moved away from the repo (a folder with a space), and run from there.
describe('the GPU kit, short of the GPU', () => {
  let dir: string;
  let kit: string;
  // Its own services (embedded Postgres, the system's redis-server), never the suite's shared ones.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL' && k !== 'REDIS_URL'));
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'inferq gpu kit '));
    await run(
      process.execPath,
      ['--import', 'tsx', 'apps/bench/src/gpu-kit/build-kit.ts', '--out', dir, '--node', process.execPath, '--no-system-packages', '--no-archive'],
      { cwd: ROOT },
    );
    kit = join(dir, 'inferq-gpu-kit');
  }, 180_000);
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('says there is no GPU, and exits 3, where nvidia-smi finds none', async () => {
    const failed = await run(join(kit, 'run'), ['--out', 'no-gpu'], { cwd: dir, env: { ...env, PATH: '/usr/bin:/bin' } }).catch(
      (err: { code: number; stdout: string }) => err,
    );
    expect(failed).toMatchObject({ code: 3 });
    expect((failed as { stdout: string }).stdout).toContain('no NVIDIA GPU');
    const summary = await readFile(join(dir, 'no-gpu/gpu-kit.md'), 'utf8');
    expect(summary).toContain('GPU: none found');
    expect(summary).toContain('Scenario 1 did not run.');
  });

  it('runs scenario 1 with what it carries (here on the CPU) and writes the report', async () => {
    await run(join(kit, 'run'), ['--device', 'cpu', '--smoke', '--out', 'report'], { cwd: dir, env });
    const manifest = JSON.parse(await readFile(join(kit, 'manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({ node: { version: process.versions.node }, onnxruntimeNode: { version: expect.any(String) }, systemPackages: [] });
    expect(existsSync(join(kit, 'node_modules/onnxruntime-node/bin/napi-v6/darwin'))).toBe(false);
    const results = JSON.parse(await readFile(join(dir, 'report/results.json'), 'utf8'));
    expect(results.results[0].metrics).toMatchObject({ device: 'cpu', worker_provider: 'cpu', failed_jobs: 0 });
    const summary = await readFile(join(dir, 'report/gpu-kit.md'), 'utf8');
    expect(summary).toContain('| cpu | yes |');
    expect(summary).toContain('Scenario 1 ran on cpu (smoke run');
  }, 180_000);
});
