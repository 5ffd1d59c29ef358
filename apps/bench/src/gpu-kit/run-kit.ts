// `inferq-gpu-kit/run [--device auto|cuda:N|webgpu:N|cpu] [--cuda-core matched|project] [--smoke] [--out dir]`, on the
// GPU machine: checks the GPU and how the kit's CUDA provider pairs with a core (cuda-setup.ts puts it in place),
// picks cuda:0 or, where CUDA cannot start, webgpu:0, runs bench scenario 1 (raw onnxruntime, end to end, worker
// side) there, and writes the bench report plus gpu-kit.md (the GPU, each device tried, how the provider paired,
// where the CNN's nodes ran, why a device failed, the headline figures) into --out.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadBenchEnv } from '../bench-env.ts';
import { cudaLibraryPath, installCudaProvider, type InstalledCuda } from './cuda-setup.ts';
import { MANIFEST_FILE, planCudaPairing, type CudaCoreChoice, type CudaPlan, type KitManifest } from './kit-manifest.ts';
import type { ProbeResult } from './probe-device.ts';

const KIT = resolve(import.meta.dirname, '../../../..');
const NO_GPU_EXIT = 3;
const NO_DEVICE_EXIT = 4;
const { values: args } = parseArgs({
  options: {
    device: { type: 'string', default: 'auto' },
    'cuda-core': { type: 'string', default: 'matched' },
    smoke: { type: 'boolean', default: false },
    out: { type: 'string', default: 'gpu-kit-report' },
  },
});
if (args['cuda-core'] !== 'matched' && args['cuda-core'] !== 'project') throw new Error(`--cuda-core ${args['cuda-core']}: expected matched or project`);
const cudaCore = args['cuda-core'] as CudaCoreChoice;
const log = (line: string) => console.log(`[gpu-kit] ${line}`);
// The run script changes into the kit; --out is relative to where it was typed.
const started = loadBenchEnv();
const out = resolve(started.INFERQ_KIT_CALLER_DIR ?? process.cwd(), args.out);

const manifestPath = join(KIT, MANIFEST_FILE);
if (!existsSync(manifestPath)) throw new Error(`${manifestPath} is missing: run the kit built by \`npm run gpu-kit\`, not the repo`);
const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as KitManifest;
const env = kitEnv();
const gpu = describeGpu();
log(gpu ? `GPU: ${gpu}` : 'no NVIDIA GPU: nvidia-smi is not on PATH or found none');

const attempts: ProbeResult[] = [];
let cudaPlan: CudaPlan | string | undefined;
let cudaInstalled: InstalledCuda | undefined;
const device = chooseDevice();
if (device) {
  log(`running scenario 1 on ${device}${args.smoke ? ' (smoke)' : ''}`);
  const bench = spawnSync(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', 'apps/bench/src/main.ts', '--only', '1', '--device', device, '--out', out, ...(args.smoke ? ['--smoke'] : [])],
    { cwd: KIT, env, stdio: 'inherit' },
  );
  cudaInstalled?.undo();
  if (bench.status !== 0) process.exit(bench.status ?? 1);
}
await mkdir(out, { recursive: true });
await writeFile(join(out, 'gpu-kit.md'), summary());
log(`${join(out, 'gpu-kit.md')} written`);
if (!device) process.exit(gpu || args.device !== 'auto' ? NO_DEVICE_EXIT : NO_GPU_EXIT);

/** The kit's redis-server, libraries and Vulkan loader on the paths; NVIDIA's Vulkan driver named where the image keeps it apart. */
function kitEnv(): NodeJS.ProcessEnv {
  const system = join(KIT, 'system/usr');
  const joined = (...parts: Array<string | undefined>) => parts.filter(Boolean).join(':');
  const driverFile = (path: string) => ['/usr/local/nvidia/share', '/usr/share', '/etc'].map((dir) => join(dir, path)).find(existsSync);
  const vulkanIcd = driverFile('vulkan/icd.d/nvidia_icd.json');
  const eglVendor = driverFile('glvnd/egl_vendor.d/10_nvidia.json');
  return {
    ...started,
    PATH: joined(join(KIT, 'node/bin'), join(system, 'bin'), started.PATH),
    // The kit carries one Node: the bench's workers run on it (no fetch on a machine that reaches nothing).
    BENCH_WORKER_NODE: started.BENCH_WORKER_NODE ?? 'current',
    // CUDA's runtime libraries and the driver's libcuda, where the machine keeps them apart (cuda-setup.ts).
    LD_LIBRARY_PATH: joined(started.LD_LIBRARY_PATH, manifest.cudaProvider ? cudaLibraryPath(log) : undefined, join(system, 'lib/x86_64-linux-gnu')),
    ...(vulkanIcd && !started.VK_DRIVER_FILES ? { VK_DRIVER_FILES: vulkanIcd } : {}),
    ...(eglVendor && !started.__EGL_VENDOR_LIBRARY_FILENAMES ? { __EGL_VENDOR_LIBRARY_FILENAMES: eglVendor } : {}),
  };
}

function describeGpu(): string | null {
  try {
    const line = execFileSync('nvidia-smi', ['--query-gpu=name,driver_version,memory.total', '--format=csv,noheader', '--id=0'], { encoding: 'utf8', env });
    return line.trim() || null;
  } catch {
    return null;
  }
}

/** --device as given, else cuda:0 where the kit's provider matches and starts, else webgpu:0; null when none runs. */
function chooseDevice(): string | null {
  if (args.device === 'auto' && !gpu) {
    log('nothing to run on: give --device cpu to try the kit without a GPU');
    return null;
  }
  const candidates = args.device === 'auto' ? ['cuda:0', 'webgpu:0'] : [args.device];
  for (const candidate of candidates) {
    const result = candidate.startsWith('cuda') ? probeCuda(candidate) : probe(candidate);
    attempts.push(result);
    log(result.ok ? `${candidate}: runs the CNN at ${result.msPerBatch} ms per batch of 32` : `${candidate} cannot start: ${result.error}`);
    if (result.placement) log(`${candidate}: ${result.placement}`);
    if (result.ok) return candidate;
  }
  return null;
}

/** Puts the provider beside the core the pairing plan names, probes, and puts everything back when CUDA does not start. */
function probeCuda(candidate: string): ProbeResult {
  cudaPlan = planCudaPairing(manifest, cudaCore);
  if (typeof cudaPlan === 'string') return { device: candidate, ok: false, error: cudaPlan };
  log(`CUDA pairing: ${cudaPlan.line}`);
  cudaInstalled = installCudaProvider(KIT, manifest, cudaPlan);
  // The worker scenario 1 starts checks the pairing itself and must be told to run an unsupported one.
  env.CUDA_PROVIDER_PAIRING = cudaPlan.pairing;
  const result = probe(candidate);
  if (!result.ok) {
    cudaInstalled.undo();
    cudaInstalled = undefined;
    delete env.CUDA_PROVIDER_PAIRING;
  }
  return result;
}

function probe(candidate: string): ProbeResult {
  const pairing = candidate.startsWith('cuda') && typeof cudaPlan === 'object' ? cudaPlan.pairing : 'same-release';
  const child = spawnSync(process.execPath, ['--import', 'tsx', 'apps/bench/src/gpu-kit/probe-device.ts', candidate, pairing], {
    cwd: KIT,
    env,
    encoding: 'utf8',
    timeout: 120_000,
  });
  const last = child.stdout.trim().split('\n').pop() ?? '';
  // onnxruntime's exception says only "Failed to load shared library"; its log on stderr says which library, or the CUDA error.
  const logged = child.stderr.match(/with error: [^\n\x1b]*|CUDA failure \d+: [^\n\x1b]*/g)?.pop();
  try {
    const result = JSON.parse(last) as ProbeResult;
    return result.ok || !logged ? result : { ...result, error: `${result.error} (onnxruntime's log: ${logged})` };
  } catch {
    return {
      device: candidate,
      ok: false,
      error: `the probe ended (${child.signal ?? `exit ${child.status}`}) with no answer: ${child.stderr.trim().split('\n').slice(-2).join(' ')}`,
    };
  }
}

function cudaProviderText(): string {
  const provider = manifest.cudaProvider;
  if (!provider) return 'none';
  const archs = provider.cudaArchitectures ? `, pruned to ${provider.cudaArchitectures.map((a) => `sm_${a}`).join('/')}` : '';
  return `${provider.version ?? 'of unknown version'} (${provider.source}${archs})`;
}

function summary(): string {
  const results = join(out, 'results.json');
  const metrics = existsSync(results)
    ? ((JSON.parse(readFileSync(results, 'utf8')) as { results: Array<{ id: string; metrics: Record<string, unknown> }> }).results.find((r) => r.id === '1')
        ?.metrics ?? {})
    : {};
  const figure = (key: string) => `| ${key} | ${metrics[key] ?? '—'} |`;
  return [
    '# The GPU run',
    '',
    `GPU: ${gpu ?? 'none found'}. Kit built ${manifest.builtAt}${manifest.commit ? ` at commit ${manifest.commit}` : ''}: Node ${manifest.node.version}, ` +
      `onnxruntime-node ${manifest.onnxruntimeNode.version}, CUDA execution provider ${cudaProviderText()}.`,
    '',
    ...(cudaPlan ? [`CUDA pairing: ${typeof cudaPlan === 'string' ? `not run: ${cudaPlan}` : cudaPlan.line}.`, ''] : []),
    ...(cudaInstalled ? [`CUDA set-up: ${cudaInstalled.describe}.`, ''] : []),
    '| device | starts | ms per batch of 32 | where the nodes ran | why not |',
    '| --- | --- | --- | --- | --- |',
    ...attempts.map(
      (a) => `| ${a.device} | ${a.ok ? 'yes' : 'no'} | ${a.msPerBatch ?? '—'} | ${a.placement ?? '—'} | ${a.error?.replaceAll('|', '/') ?? ''} |`,
    ),
    '',
    device
      ? `Scenario 1 ran on ${device}${args.smoke ? ' (smoke run: tiny counts, figures mean nothing)' : ''}; README.md beside this file is its report.`
      : 'Scenario 1 did not run.',
    '',
    '| figure | value |',
    '| --- | --- |',
    ...[
      'worker_provider',
      'raw_onnx_items_per_s',
      'worker_side_items_per_s',
      'worker_side_to_raw_ratio',
      'e2e_items_per_s',
      'e2e_to_raw_ratio',
      'raw_gpu_utilization_mean_percent',
      'worker_side_gpu_utilization_mean_percent',
      'e2e_gpu_utilization_mean_percent',
      'worker_side_main_thread_us_per_job',
    ].map(figure),
    '',
  ].join('\n');
}
