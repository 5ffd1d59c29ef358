import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEVICE_CALL_BYTES, partBytesFor, partName, planParts, writeParts } from './kit-parts.ts';

const run = promisify(execFile);
const RECEIVE = resolve(import.meta.dirname, 'receive-kit.sh');

describe('planParts', () => {
  it('cuts into as few parts as fit, of near equal size, covering every byte once', () => {
    expect(planParts(100, 40)).toEqual([
      [0, 34],
      [34, 68],
      [68, 100],
    ]);
    expect(planParts(40, 40)).toEqual([[0, 40]]);
    expect(planParts(0, 40)).toEqual([[0, 0]]);
  });

  it('sizes a part to what a device call has left beside the working tree', () => {
    expect(partBytesFor(4 * 2 ** 20)).toBe(DEVICE_CALL_BYTES - 7 * 2 ** 20);
    expect(() => partBytesFor(63 * 2 ** 20)).toThrow(/leaves no room/);
  });

  it('names parts so that they sort in order', () => {
    expect(partName('/x/kit.tar.xz', 0, 12)).toBe('kit.tar.xz.part01');
    expect(partName('/x/kit.tar.xz', 11, 12)).toBe('kit.tar.xz.part12');
  });
});

// What the GPU machine does with the parts, one device call at a time (receive-kit.sh), with a kit whose `run` only echoes.
describe('writeParts and receive-kit.sh', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'inferq kit parts '));
    const kit = join(dir, 'build/inferq-gpu-kit');
    await mkdir(kit, { recursive: true });
    await writeFile(join(kit, 'run'), '#!/bin/sh\necho "kit ran with: $*"\n');
    await chmod(join(kit, 'run'), 0o755);
    // Incompressible, so the archive needs several parts.
    await writeFile(join(kit, 'payload.bin'), randomBytes(300_000));
    await run('sh', ['-c', 'tar -C "$1" -cf - inferq-gpu-kit | xz -0 > "$2"', 'sh', join(dir, 'build'), join(dir, 'build/inferq-gpu-kit.tar.xz')]);
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('joins the parts carried in separate calls, checks them and runs the kit once all are there', async () => {
    const partsDir = join(dir, 'build/parts');
    await mkdir(partsDir);
    const written = await writeParts(join(dir, 'build/inferq-gpu-kit.tar.xz'), partsDir, 128 * 1024);
    expect(written.parts.map((p) => p.name)).toEqual(['inferq-gpu-kit.tar.xz.part1', 'inferq-gpu-kit.tar.xz.part2', 'inferq-gpu-kit.tar.xz.part3']);
    const list = await readFile(join(partsDir, 'parts.sha256'), 'utf8');
    expect(list.trim().split('\n')).toHaveLength(4);

    const store = join(dir, 'store');
    const call = async (parts: string[], runArgs: string[] = []) => {
      // A fresh working tree each call: only the list and the parts it carries.
      const tree = await mkdtemp(join(dir, 'tree-'));
      await mkdir(join(tree, '.inferq/gpu-kit/parts'), { recursive: true });
      for (const name of ['parts.sha256', ...parts]) await writeFile(join(tree, '.inferq/gpu-kit/parts', name), await readFile(join(partsDir, name)));
      return run('sh', [RECEIVE, ...runArgs], { cwd: tree, env: { ...process.env, INFERQ_KIT_STORE: store } });
    };
    const first = await call(['inferq-gpu-kit.tar.xz.part1', 'inferq-gpu-kit.tar.xz.part3']);
    expect(first.stdout).toContain('still to carry: inferq-gpu-kit.tar.xz.part2');
    const last = await call(['inferq-gpu-kit.tar.xz.part2'], ['--device', 'cuda:0']);
    expect(last.stdout).toContain('every part is here');
    expect(last.stdout).toContain('kit ran with: --device cuda:0');
    expect(await readdir(store)).toEqual(['inferq-gpu-kit', 'parts']);
  });

  it('drops a damaged part and asks for it again', async () => {
    const partsDir = join(dir, 'build/parts-damaged');
    await mkdir(partsDir);
    await writeParts(join(dir, 'build/inferq-gpu-kit.tar.xz'), partsDir, 200 * 1024);
    await writeFile(join(partsDir, 'inferq-gpu-kit.tar.xz.part1'), 'not the part');
    const failed = await run('sh', [RECEIVE], {
      cwd: dir,
      env: { ...process.env, INFERQ_KIT_PARTS: partsDir, INFERQ_KIT_STORE: join(dir, 'store-damaged') },
    }).catch((err: { code: number; stderr: string }) => err);
    expect(failed).toMatchObject({ code: 1, stderr: expect.stringContaining('inferq-gpu-kit.tar.xz.part1 is damaged') });
  });
});
