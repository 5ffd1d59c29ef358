import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installCudaProvider } from './cuda-setup.ts';
import { planCudaPairing, type CudaPlan, type KitManifest } from './kit-manifest.ts';

const BIN = 'bin/napi-v6/linux/x64';
const manifest: Pick<KitManifest, 'onnxruntimeNode' | 'cudaProvider'> = {
  onnxruntimeNode: { version: '1.30.0' },
  cudaProvider: {
    version: '1.29.0',
    source: 'npm p@0.4.9',
    dir: 'cuda/providers',
    cudaArchitectures: [90],
    matchedCore: { version: '1.29.0', dir: 'cuda/onnxruntime-node' },
  },
};

// A kit as build-kit.ts lays it out with --cuda-ep npm, each file holding where it came from.
describe('installCudaProvider', () => {
  let kit: string;
  const put = async (path: string, text: string) => {
    await mkdir(join(kit, path, '..'), { recursive: true });
    await writeFile(join(kit, path), text);
  };
  beforeEach(async () => {
    kit = await mkdtemp(join(tmpdir(), 'inferq-cuda-setup-'));
    await put(`node_modules/onnxruntime-node/${BIN}/libonnxruntime.so.1`, 'core 1.30.0');
    await put(`cuda/onnxruntime-node/${BIN}/libonnxruntime.so.1`, 'core 1.29.0');
    for (const f of ['libonnxruntime_providers_cuda.so', 'libonnxruntime_providers_shared.so', 'onnxruntime-providers.json'])
      await put(`cuda/providers/${f}`, f);
  });
  afterEach(async () => {
    await rm(kit, { recursive: true, force: true });
  });
  const core = () => readFile(join(kit, `node_modules/onnxruntime-node/${BIN}/libonnxruntime.so.1`), 'utf8');
  const beside = () => readdir(join(kit, `node_modules/onnxruntime-node/${BIN}`));

  it('swaps in the core of the provider release with the provider beside it, and undoes it', async () => {
    const installed = installCudaProvider(kit, manifest, planCudaPairing(manifest) as CudaPlan);
    expect(await core()).toBe('core 1.29.0');
    expect(await beside()).toEqual([
      'libonnxruntime.so.1',
      'libonnxruntime_providers_cuda.so',
      'libonnxruntime_providers_shared.so',
      'onnxruntime-providers.json',
    ]);
    expect(installed.describe).toBe(
      'onnxruntime-node 1.29.0 in place of 1.30.0, with libonnxruntime_providers_cuda.so, libonnxruntime_providers_shared.so beside its libonnxruntime.so.1',
    );
    installed.undo();
    expect(await core()).toBe('core 1.30.0');
    expect(await beside()).toEqual(['libonnxruntime.so.1']);
    expect(await readdir(join(kit, `cuda/onnxruntime-node/${BIN}`))).toEqual(['libonnxruntime.so.1']);
    expect(existsSync(join(kit, 'cuda/onnxruntime-node-project'))).toBe(false);
  });

  it("puts the provider beside the project's core when asked to run the unsupported pair", async () => {
    const installed = installCudaProvider(kit, manifest, planCudaPairing(manifest, 'project') as CudaPlan);
    expect(await core()).toBe('core 1.30.0');
    expect(await beside()).toContain('libonnxruntime_providers_cuda.so');
    installed.undo();
    expect(await beside()).toEqual(['libonnxruntime.so.1']);
  });
});
