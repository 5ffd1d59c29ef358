/**
 * The CUDA execution provider from npm, for machines that cannot reach NuGet (../../../../docs/performance.md, "The
 * GPU run"): ONNX Runtime 1.29.0's CUDA 13 provider from `com.github.asus4.onnxruntime.linux-x64-gpu`, checked against
 * the sha256 on record and pruned to one GPU architecture, and onnxruntime-node 1.29.0 (its own release: the safe pair)
 * for Linux x64. Build-time only: `npm pack` fetches 179 MB; nothing here runs in CI but the pure parts it calls.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cp, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { pruneFatbins } from './fatbin-prune.ts';
import { keepPackageFile } from './kit-contents.ts';

export const NPM_CUDA_PROVIDER = {
  name: 'com.github.asus4.onnxruntime.linux-x64-gpu',
  version: '0.4.9',
  /** onnxruntime's release it is built from, and the CUDA major version it needs. */
  release: '1.29.0',
  cuda: 13,
  dir: 'package/Plugins/Linux/x64',
  /** Of libonnxruntime_providers_cuda.so as published (../shared/CUDA.md). Its TensorRT provider needs libnvinfer 10: not carried. */
  sha256: '56cf3254b118ad837ccc4ed8f6d1b23504bbf7ef91b34cbc0b289cb7f10b3037',
} as const;
const CUDA_LIBRARY = 'libonnxruntime_providers_cuda.so';
const SHARED_LIBRARY = 'libonnxruntime_providers_shared.so';
/** Where onnxruntime-node keeps its Linux x64 libraries; the providers go beside libonnxruntime.so.1, where it looks for them. */
export const ORT_LINUX_BIN = 'bin/napi-v6/linux/x64';

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** `npm pack name@version` into `dir` and unpacked there (under `package/`); npm checks the registry's integrity. */
function packAndUnpack(spec: string, dir: string): string {
  const tarball = execFileSync('npm', ['pack', spec, '--pack-destination', dir, '--silent'], { cwd: dir, encoding: 'utf8' }).trim().split('\n').pop()!;
  execFileSync('tar', ['-xzf', join(dir, tarball), '-C', dir]);
  return join(dir, 'package');
}

export interface NpmCudaProvider {
  release: string;
  source: string;
  /** The architectures it keeps code for; absent when not pruned. */
  cudaArchitectures?: number[];
  /** What the pruning did, for the build log. */
  pruned: string;
}

/**
 * Fetches the provider, checks it, prunes it to `sm_<arch>` (null: keeps every architecture) and writes it with the
 * shared provider library and the record the worker reads (packages/inference/src/provider-pairing.ts) into `dest`.
 */
export async function addNpmCudaProvider(scratch: string, dest: string, arch: number | null, recordFile: string): Promise<NpmCudaProvider> {
  const work = join(scratch, 'npm-cuda-provider');
  await mkdir(work, { recursive: true });
  const unpacked = packAndUnpack(`${NPM_CUDA_PROVIDER.name}@${NPM_CUDA_PROVIDER.version}`, work);
  const from = join(work, NPM_CUDA_PROVIDER.dir);
  const library = readFileSync(join(from, CUDA_LIBRARY));
  const found = sha256(library);
  if (found !== NPM_CUDA_PROVIDER.sha256) {
    throw new Error(`${CUDA_LIBRARY} of ${NPM_CUDA_PROVIDER.name}@${NPM_CUDA_PROVIDER.version} has sha256 ${found}, not ${NPM_CUDA_PROVIDER.sha256}`);
  }
  const result = arch === null ? undefined : pruneFatbins(library, arch);
  if (result?.kept === 0) throw new Error(`the provider has no code for sm_${arch} (it has ${result.architectures.map((a) => `sm_${a}`).join(', ')})`);
  await mkdir(dest, { recursive: true });
  await writeFile(join(dest, CUDA_LIBRARY), library);
  await cp(join(from, SHARED_LIBRARY), join(dest, SHARED_LIBRARY));
  const source = `npm ${NPM_CUDA_PROVIDER.name}@${NPM_CUDA_PROVIDER.version}`;
  const archs = arch === null ? {} : { cudaArchitectures: [arch] };
  const record = { release: NPM_CUDA_PROVIDER.release, source, ...archs, sha256: { [CUDA_LIBRARY]: sha256(library) } };
  await writeFile(join(dest, recordFile), `${JSON.stringify(record, null, 2)}\n`);
  await rm(unpacked, { recursive: true, force: true });
  const pruned = result
    ? `kept ${result.kept} sm_${arch} entries, zeroed ${result.dropped} of ${result.architectures.map((a) => `sm_${a}`).join('/')}, ` +
      `${result.untouched} fatbin(s) without sm_${arch} kept whole`
    : 'not pruned (every architecture)';
  return { release: NPM_CUDA_PROVIDER.release, source, ...archs, pruned };
}

/**
 * onnxruntime-node `version` as a package folder at `dest` (Linux x64 binaries only), with its own onnxruntime-common
 * nested under it, so it can stand in for the project's onnxruntime-node without touching anything else.
 */
export async function addOnnxruntimeCore(scratch: string, dest: string, version: string): Promise<void> {
  for (const name of ['onnxruntime-node', 'onnxruntime-common']) {
    const work = join(scratch, `${name}-${version}`);
    await mkdir(work, { recursive: true });
    const unpacked = packAndUnpack(`${name}@${version}`, work);
    const target = name === 'onnxruntime-node' ? dest : join(dest, 'node_modules', name);
    await cp(unpacked, target, { recursive: true, filter: (src) => keepPackageFile(join('node_modules', name, relative(unpacked, src))) });
  }
  const bin = await readdir(join(dest, ORT_LINUX_BIN));
  if (!bin.includes('libonnxruntime.so.1')) throw new Error(`onnxruntime-node@${version} has no Linux x64 libonnxruntime.so.1`);
}
