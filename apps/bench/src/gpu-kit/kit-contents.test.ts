import { mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keepPackageFile, runtimePackages } from './kit-contents.ts';
import { planCudaPairing } from './kit-manifest.ts';

async function writePackage(dir: string, pkg: object): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify(pkg));
}

describe('runtimePackages', () => {
  it('lists what the start packages need, found the way Node finds it, and follows workspace links without listing them', async () => {
    const root = await mkdtemp(join(tmpdir(), 'inferq-kit-'));
    await writePackage(join(root, 'apps/app'), { dependencies: { '@scope/lib': '*', a: '*' } });
    await writePackage(join(root, 'packages/lib'), { dependencies: { b: '*' } });
    await mkdir(join(root, 'node_modules/@scope'), { recursive: true });
    await symlink('../../packages/lib', join(root, 'node_modules/@scope/lib'));
    await writePackage(join(root, 'node_modules/a'), { dependencies: { c: '*' }, optionalDependencies: { missing: '*' }, peerDependencies: { b: '*' } });
    await writePackage(join(root, 'node_modules/a/node_modules/c'), {});
    await writePackage(join(root, 'node_modules/b'), {});
    await writePackage(join(root, 'node_modules/c'), { dependencies: { b: '*' } }); // shadowed for a by its own copy
    await writePackage(join(root, 'node_modules/unused'), {});
    await writePackage(join(root, 'node_modules/tool'), {});

    expect(runtimePackages(root, [join(root, 'apps/app')], ['tool'])).toEqual([
      'node_modules/a',
      'node_modules/a/node_modules/c',
      'node_modules/b',
      'node_modules/tool',
    ]);
  });

  it('names a dependency that is not installed', async () => {
    const root = await mkdtemp(join(tmpdir(), 'inferq-kit-'));
    await writePackage(join(root, 'app'), { dependencies: { gone: '*' } });
    expect(() => runtimePackages(root, [join(root, 'app')])).toThrow('gone, a dependency of app, is not installed: run npm ci first');
  });
});

describe('keepPackageFile', () => {
  it.each([
    ['node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1', true],
    ['node_modules/onnxruntime-node/bin/napi-v6/linux', true],
    ['node_modules/onnxruntime-node/bin/napi-v6/linux/arm64/libonnxruntime.so.1', false],
    ['node_modules/onnxruntime-node/bin/napi-v6/darwin', false],
    ['node_modules/onnxruntime-node/bin/napi-v6/win32/x64/onnxruntime.dll', false],
    ['node_modules/fastify/fastify.js', true],
    ['node_modules/fastify/types/index.d.ts', false],
    ['node_modules/fastify/README.md', false],
    ['node_modules/fastify/LICENSE.md', true],
    ['node_modules/pino/test/basic.test.js', false],
    ['node_modules/@scope/pkg/examples', false],
    ['node_modules/@scope/pkg/lib/test-helpers.js', true],
    ['node_modules/esbuild/bin/esbuild', false],
    ['node_modules/@esbuild/linux-x64/bin/esbuild', true],
  ])('%s: %s', (path, kept) => {
    expect(keepPackageFile(path)).toBe(kept);
  });
});

describe('planCudaPairing', () => {
  const onnxruntimeNode = { version: '1.30.0' };
  const npm = { version: '1.29.0', source: 'npm com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9', dir: 'cuda/providers' };
  it('runs a provider of the project core release on that core', () => {
    expect(planCudaPairing({ onnxruntimeNode, cudaProvider: { version: '1.30.0', source: 'x.nupkg' } })).toEqual({
      core: 'project',
      pairing: 'same-release',
      line: 'core 1.30.0 with cuda provider 1.30.0 (x.nupkg): same release',
    });
  });

  it('runs a provider of another release on the core of its release the kit carries, or on the project core only when asked', () => {
    const withCore = { ...npm, matchedCore: { version: '1.29.0', dir: 'cuda/onnxruntime-node' } };
    expect(planCudaPairing({ onnxruntimeNode, cudaProvider: withCore })).toMatchObject({ core: 'matched', pairing: 'same-release' });
    expect(planCudaPairing({ onnxruntimeNode, cudaProvider: withCore }, 'project')).toEqual({
      core: 'project',
      pairing: 'any',
      line:
        'core 1.30.0 with cuda provider 1.29.0 (npm com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9): ' +
        'unsupported pairing, run because --cuda-core project asked for it',
    });
    expect(planCudaPairing({ onnxruntimeNode, cudaProvider: npm })).toMatch(
      /1\.29\.0 but onnxruntime-node is 1\.30\.0, and the kit carries no core of 1\.29\.0/,
    );
  });

  it('says why there is nothing to run', () => {
    expect(planCudaPairing({ onnxruntimeNode, cudaProvider: { version: null, source: 'dir' } })).toMatch(/no version on record/);
    expect(planCudaPairing({ onnxruntimeNode, cudaProvider: null })).toMatch(/carries no CUDA execution provider/);
  });
});
